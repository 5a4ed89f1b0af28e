"""AGENT_DATABASE_URL (issue 11 §2): its password is never shown, by ``agent config`` or by the line that refuses a
URL that is not PostgreSQL's; without the driver it is one line saying what to install."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest

from agent.app.data_dir import DataPaths
from agent.config import load_settings, without_password
from agent.errors import ConfigError, UsageError
from agent.wiring import build_ledger
from tests.cli_harness import invoke

SECRET = "s3cr3t-pw"


def test_agent_config_shows_the_database_url_without_its_password() -> None:
    shown = invoke("config", env={"AGENT_DATABASE_URL": f"postgresql://agent:{SECRET}@db.example:5432/agent"})
    assert shown.returncode == 0, shown.stderr
    assert "postgresql://agent:***@db.example:5432/agent" in shown.stdout
    assert SECRET not in shown.stdout + shown.stderr


def test_a_url_that_is_not_postgresql_is_one_line_without_the_password(tmp_path: Path) -> None:
    nowhere = tmp_path / "none.env"
    with pytest.raises(UsageError) as refused:
        load_settings(environ={"AGENT_DATABASE_URL": f"mysql://agent:{SECRET}@db/agent"}, dotenv_path=nowhere,
                      config_path=nowhere)
    assert str(refused.value) == ("AGENT_DATABASE_URL='mysql://agent:***@db/agent' is not valid: expected "
                                  "postgresql://USER@HOST/DATABASE, not mysql://.")
    done = invoke("memories", "list", env={"AGENT_DATABASE_URL": f"mysql://agent:{SECRET}@db/agent"})
    assert done.returncode == 2 and SECRET not in done.stderr and "\n" not in done.stderr.strip()


def test_without_the_driver_the_database_url_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_driver(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "agent.adapters.postgres_ledger":
            raise ModuleNotFoundError("No module named 'psycopg'", name="psycopg")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_driver)
    settings = load_settings(environ={"AGENT_DATABASE_URL": "postgresql://agent@db/agent"},
                             dotenv_path=tmp_path / "none", config_path=tmp_path / "none")
    with pytest.raises(ConfigError, match=r"needs the PostgreSQL driver, which is not installed \(psycopg\): pip "
                                          r"install 'agent\[postgres\]', or unset AGENT_DATABASE_URL\."):
        build_ledger(settings, DataPaths(tmp_path))


def test_without_password_leaves_a_url_without_one_as_it_is() -> None:
    for url in ("postgresql://agent@db/agent", "postgresql:///agent?host=/run/postgresql", "postgres://db"):
        assert without_password(url) == url
    assert without_password("postgresql://a:p%40ss@db/x") == "postgresql://a:***@db/x"
    assert without_password("postgresql://a:p@ss@db/x?sslmode=require") == "postgresql://a:***@db/x?sslmode=require"


# Passwords a user may well type unencoded, each with what a URL must write instead (the new-user trial's cases).
UNENCODED = [("pa#ss", "'#'", "%23"), ("pa/ss", "'/'", "%2F"), ("s3cr@t", "'@'", "%40"), ("p%ZZ", "'%'", "%25"),
             ("p@ss/w#rd:%x?é", "'@'", "%40"), ("two words", "' '", "%20"), ("a?b", "'?'", "%3F")]


@pytest.mark.parametrize(("password", "char", "spelled"), UNENCODED)
def test_a_password_a_url_must_encode_is_named_by_its_character_and_never_shown(
    tmp_path: Path, password: str, char: str, spelled: str
) -> None:
    url = f"postgresql://agent:{password}@127.0.0.1:5432/agent"
    nowhere = tmp_path / "none.env"
    with pytest.raises(UsageError) as refused:
        load_settings(environ={"AGENT_DATABASE_URL": url}, dotenv_path=nowhere, config_path=nowhere)
    assert str(refused.value) == (f"AGENT_DATABASE_URL='postgresql://agent:***@127.0.0.1:5432/agent' is not valid: "
                                  f"its user name or password holds {char}, which a URL must write as {spelled}.")
    for args in (("memories", "list"), ("config",)):
        done = invoke(*args, env={"AGENT_DATABASE_URL": url})
        assert done.returncode == 2, (args, done.stderr)
        assert "\n" not in done.stderr.strip()
        assert not any(piece in done.stdout + done.stderr for piece in _pieces(password)), done.stderr


def _pieces(password: str) -> set[str]:
    """Every run of 3 or more characters of ``password`` between the characters that split URLs (a message that
    quotes what libpq took for a host or port would show one)."""
    words = password.replace("@", " ").replace("/", " ").replace("#", " ").replace("?", " ").split()
    return {word for word in words if len(word) >= 3} | {password}


def test_a_password_in_a_conninfo_string_or_a_query_is_masked_too(tmp_path: Path) -> None:
    conninfo = "host=127.0.0.1 port=5432 dbname=agent user=agent password=agentpw"
    nowhere = tmp_path / "none.env"
    with pytest.raises(UsageError) as refused:
        load_settings(environ={"AGENT_DATABASE_URL": conninfo}, dotenv_path=nowhere, config_path=nowhere)
    assert "agentpw" not in str(refused.value) and "password=***" in str(refused.value)
    assert without_password("postgresql://db/x?password=agentpw&sslmode=require") == (
        "postgresql://db/x?password=***&sslmode=require")
    assert without_password("host=db password='a b\\'c' dbname=x") == "host=db password=*** dbname=x"
    shown = invoke("config", env={"AGENT_DATABASE_URL": "postgresql://db/x?password=agentpw"})
    assert shown.returncode == 0 and "agentpw" not in shown.stdout + shown.stderr
