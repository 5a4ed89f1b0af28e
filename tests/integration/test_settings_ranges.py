"""Every setting is checked where settings are read: a value that does not parse or lies outside its bounds is one
line naming the variable (or flag), the value and what is allowed, exit 2, and nothing is opened or created.

Before, ``AGENT_MEMORY_CAPACITY=0 agent memories add ...`` evicted every memory and said ``remembered``; a nan
threshold, ``AGENT_TIMEOUT=-1`` or ``OPENAI_BASE_URL=http://[::1`` were taken, or crashed with a traceback.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent import cli
from agent.config import SPECS, Aliases, Settings, approve_dotenv, default_data_dir, load_settings
from agent.errors import UsageError

NOWHERE = Path("/nonexistent/settings.env")

# Values each setting must refuse, and values it must take (raw text as a variable would hold it).
BAD: dict[str, list[str]] = {
    "api_key": [],  # any text can be a key; it is never shown, so nothing about it is checked here
    "base_url": ["http://[::1", "127.0.0.1:8080/v1", "localhost:11434", "ftp://host/v1", "http:///v1",
                 "http://host:99999/v1", "http://host:port/v1"],
    "model": [" ", "\t"],
    "model_aliases": ["fast", "fast=", "=gpt-4o", "fast=a,fast=b", "f/st=gpt-4o"],
    "data_dir": ["", "  ", "~nosuchuser4242/x"],
    "user": ["", " ", "\t\n"],
    "embedder": ["fast", "minilm"],
    "embedding_model": ["  "],
    "local_model_dir": ["~nosuchuser4242/model"],
    "memory_k": ["0", "-1", "101", "1.5", "many", "nan"],
    "memory_threshold": ["5", "1.01", "-1.5", "nan", "inf", "-inf", "high"],
    "memory_tokens": ["0", "-5", "49", "100001", "1e3"],
    "memory_capacity": ["0", "-1", "-10000", "10000001", "ten"],
    "memory_writes_per_session": ["-1", "0", "100001", "2.5"],
    "llm_extract": ["maybe", "2"],
    "grounding_threshold": ["5", "-2", "nan", "inf"],
    "context_tokens": ["-100", "0", "499", "1e9", "lots"],
    "max_tokens": ["-1", "1000001", "1.5", "many"],
    "system_prompt": ["assistant", "both"],
    "chroma_url": ["127.0.0.1:8000", "http://[::1", "tcp://127.0.0.1:8000"],
    "database_url": ["db.example/agent", "mysql://db.example/agent", "http://db.example:5432/agent",
                     "postgresql://db:99999/agent", "postgresql://[::1/agent"],
    "timeout": ["-1", "0", "nan", "inf", "-inf", "3601", "soon"],
    "database_timeout": ["0", "0.5", "601", "nan", "inf", "later"],
    "max_retries": ["-1", "11", "1.5", "nan"],
}
GOOD: dict[str, list[tuple[str, Any]]] = {
    "api_key": [("sk-test", "sk-test")],
    "base_url": [("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"), ("https://api.example.com/v1",) * 2,
                 ("http://[::1]:8080/v1",) * 2, ("", None)],
    "model": [("llama3.2", "llama3.2")],
    "model_aliases": [("fast=gpt-4o-mini, smart=gpt-4o", Aliases((("fast", "gpt-4o-mini"), ("smart", "gpt-4o")))),
                      ("", Aliases())],
    "data_dir": [("/tmp/store", Path("/tmp/store")), ("~/x", Path("~/x"))],
    "user": [("alice", "alice")],
    "embedder": [("LOCAL", "local"), ("auto", "auto")],
    "embedding_model": [("text-embedding-3-large",) * 2],
    "local_model_dir": [("~/model", Path("~/model")), ("", None)],
    "memory_k": [("1", 1), ("100", 100), (" 7 ", 7)],
    "memory_threshold": [("-1", -1.0), ("1", 1.0), ("0.3", 0.3), ("", None)],
    "memory_tokens": [("50", 50), ("100000", 100_000)],
    "memory_capacity": [("1", 1), ("10000000", 10_000_000)],
    "memory_writes_per_session": [("1", 1), ("100000", 100_000)],
    "llm_extract": [("yes", True), ("off", False)],
    "grounding_threshold": [("0.5", 0.5), ("-1", -1.0), ("", None)],
    "context_tokens": [("500", 500), ("128000", 128_000)],
    "max_tokens": [("0", 0), ("1024", 1024), ("1000000", 1_000_000)],
    "system_prompt": [("auto", "auto"), ("USER", "user"), ("system", "system")],
    "chroma_url": [("http://127.0.0.1:8000", "http://127.0.0.1:8000"), ("", None)],
    "database_url": [("postgresql://agent@127.0.0.1:5432/agent",) * 2, ("postgres://a:pw@db/agent",) * 2,
                     ("postgresql:///agent?host=/run/postgresql",) * 2, ("", None)],
    "timeout": [("0.5", 0.5), ("3600", 3600.0)],
    "database_timeout": [("1", 1.0), ("2.5", 2.5), ("600", 600.0)],
    "max_retries": [("0", 0), ("10", 10)],
}


def test_the_tables_cover_every_setting() -> None:
    assert set(BAD) == set(GOOD) == {spec.field for spec in SPECS}
    for spec in SPECS:
        if spec.bounds is not None:
            assert BAD[spec.field], f"{spec.field} has bounds, so it needs values outside them"


def test_every_default_lies_within_its_bounds_and_matches_settings() -> None:
    defaults = Settings()
    for spec in SPECS:
        expected = default_data_dir() if spec.field == "data_dir" else spec.default
        assert getattr(defaults, spec.field) == expected, spec.field
        if spec.bounds is not None and spec.default is not None:
            assert spec.default in spec.bounds, spec.field


def _cases(table: dict[str, list[Any]]) -> list[tuple[Any, ...]]:
    by_field = {spec.field: spec for spec in SPECS}
    return [(by_field[name], *(case if isinstance(case, tuple) else (case,)))
            for name, cases in table.items() for case in cases]


@pytest.mark.parametrize(("spec", "raw"), _cases(BAD), ids=lambda v: getattr(v, "field", repr(v)))
def test_a_bad_value_from_the_environment_names_the_variable_the_value_and_what_is_allowed(spec: Any, raw: str) -> None:
    name = spec.env[0]
    with pytest.raises(UsageError) as caught:
        load_settings(environ={name: raw}, dotenv_path=NOWHERE, config_path=NOWHERE)
    message = str(caught.value)
    assert message.startswith(f"{name}={raw!r} is not valid: ")
    assert "\n" not in message
    if spec.bounds is not None:
        assert message.endswith(f"expected {spec.bounds}.")
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(("spec", "raw"), _cases(BAD), ids=lambda v: getattr(v, "field", repr(v)))
def test_a_bad_value_from_a_settings_file_names_the_file(spec: Any, raw: str, tmp_path: Path) -> None:
    name = spec.env[0]
    for which in ("dotenv_path", "config_path"):
        settings_file = tmp_path / f"{which}.env"
        settings_file.write_text(f"{name}={json.dumps(raw)}\n")
        paths = {"dotenv_path": NOWHERE, "config_path": tmp_path / "none.env", which: settings_file}
        if which == "dotenv_path":  # a .env outside the checkout is read once approved
            approve_dotenv(settings_file, paths["config_path"])
        with pytest.raises(UsageError, match=f" in {settings_file} is not valid: "):
            load_settings(environ={}, **paths)


@pytest.mark.parametrize(("spec", "raw", "expected"), _cases(GOOD), ids=lambda v: getattr(v, "field", repr(v)))
def test_a_good_value_is_taken(spec: Any, raw: str, expected: Any) -> None:
    settings = load_settings(environ={spec.env[0]: raw}, dotenv_path=NOWHERE, config_path=NOWHERE)
    if spec.blank_is_default and not raw:
        assert getattr(settings, spec.field) == getattr(Settings(), spec.field)
    else:
        # ``~`` in an expected path is the home of the test (the autouse fixture's), read now
        assert getattr(settings, spec.field) == (expected.expanduser() if isinstance(expected, Path) else expected)


@pytest.mark.parametrize(("field", "raw", "shown"), [
    ("user", "", "--user ''"), ("user", "  ", "--user '  '"), ("data_dir", "", "--data-dir ''"),
    ("model", " ", "--model ' '"),
])
def test_a_bad_flag_is_named_as_the_flag(field: str, raw: str, shown: str) -> None:
    with pytest.raises(UsageError, match=f"^{shown} is not valid: expected"):
        load_settings(flags={field: raw}, environ={}, dotenv_path=NOWHERE, config_path=NOWHERE)


def test_a_flag_beats_a_bad_environment_value_only_for_its_own_setting() -> None:
    settings = load_settings(flags={"user": "alice"}, environ={"AGENT_USER": ""}, dotenv_path=NOWHERE,
                             config_path=NOWHERE)
    assert settings.user == "alice"


def test_data_dir_tilde_is_expanded_from_the_flag_and_the_environment() -> None:
    home = Path.home()
    assert load_settings(flags={"data_dir": "~/x"}, environ={}, dotenv_path=NOWHERE).data_dir == home / "x"
    assert load_settings(environ={"AGENT_DATA_DIR": "~/y"}, dotenv_path=NOWHERE).data_dir == home / "y"


COMMANDS = [
    ["memories", "add", "I also keep a tortoise called Speedy"],
    ["memories", "list"],
    ["memories", "search", "tortoise"],
    ["memories", "forget", "--all", "--yes"],
    ["memories", "stats"],
    ["memories", "rebuild"],
    ["sessions", "list"],
    ["sessions", "rm", "work"],
    ["config"],
    ["chat"],
    [],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv) or "agent")
@pytest.mark.parametrize("setting", ["AGENT_MEMORY_CAPACITY=0", "AGENT_TIMEOUT=nan", "OPENAI_BASE_URL=http://[::1",
                                     "AGENT_USER="])
def test_every_command_stops_at_a_bad_setting_before_touching_the_data_dir(
    argv: list[str], setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name, raw = setting.split("=", 1)
    monkeypatch.setenv(name, raw)
    monkeypatch.setattr(sys, "argv", ["agent", *argv])
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == f"agent: {name}={raw!r} is not valid: {err.split(' is not valid: ', 1)[1]}"
    assert err.count("\n") == 1
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("argv", [
    ["--user", "", "memories", "list"], ["memories", "--user", " ", "list"], ["--user", "", "chat"],
    ["--data-dir", "", "memories", "list"], ["memories", "--data-dir", "", "add", "x"], ["sessions", "--data-dir", "",
                                                                                        "list"],
    ["--data-dir", "", "config"], ["-m", " "],
], ids=" ".join)
def test_an_empty_flag_is_refused_by_every_command_that_takes_it(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["agent", *argv])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    flag = next(arg for arg in argv if arg.startswith("-"))
    assert line.startswith(f"agent: {'--model' if flag == '-m' else flag} ") and " is not valid: expected " in line
    assert not (tmp_path / "data").exists() and list(tmp_path.iterdir()) == [tmp_path / "home"]


def test_data_dir_flag_with_tilde_after_equals_is_expanded(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["agent", "--data-dir=~/x", "config"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("data_dir ")]
    assert row.split()[2] == str(Path.home() / "x")
