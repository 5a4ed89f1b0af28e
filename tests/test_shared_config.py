"""AGENT_DATABASE_URL (issue 11 §2): its password is never shown, by ``agent config`` or by the line that refuses a
URL that is not PostgreSQL's; without the driver it is one line saying what to install."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest

from agent.config import load_settings, without_password
from agent.errors import ConfigError, UsageError
from agent.wiring import DataPaths, build_ledger
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
