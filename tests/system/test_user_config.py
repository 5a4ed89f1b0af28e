"""The user-level settings file (``~/.config/agent/config.env``, the platform's user config directory elsewhere):
read after the environment and before the working directory's ``.env``, shown as a source by ``agent config``,
checked like every other layer. Also ``agent --version``, ``agent config`` in a pipe (every value whole) and
``--help`` (no ``<bool>`` after flags)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agent import __version__, cli
from agent.config import approve_dotenv, load_settings, user_config_file
from tests.warm_agent import WarmAgent


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``agent ARGV`` in this process, through the same entry point as the command; (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["agent", *argv])
    code = 0
    try:
        cli.main()
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_file_is_in_the_users_config_directory() -> None:
    assert user_config_file() == Path(os.environ["HOME"]) / ".config" / "agent" / "config.env"


def test_precedence_environment_then_user_config_then_dotenv(tmp_path: Path) -> None:
    config = write(tmp_path / "config.env", "AGENT_MODEL=from-config\nAGENT_USER=carol\nAGENT_MEMORY_K=4\n")
    dotenv = write(tmp_path / ".env", "AGENT_MODEL=from-dotenv\nAGENT_USER=dave\nAGENT_MEMORY_TOKENS=900\n")
    approve_dotenv(dotenv, config)
    settings = load_settings(environ={"AGENT_MODEL": "from-env"}, dotenv_path=dotenv, config_path=config)
    assert (settings.model, settings.user, settings.memory_k, settings.memory_tokens) == ("from-env", "carol", 4, 900)
    sources = {name: source for name, _, _, source in settings.describe()}
    assert sources["model"] == "environment (AGENT_MODEL)"
    assert sources["user"] == "user config (AGENT_USER)"
    assert sources["memory_tokens"] == ".env (AGENT_MEMORY_TOKENS)"
    assert [(f.path, f.status) for f in settings.files] == [(config, "own"), (dotenv, "approved")]


def test_a_readable_user_config_with_a_key_is_warned_about(tmp_path: Path) -> None:
    config = write(tmp_path / "config.env", "OPENAI_API_KEY=sk-test-CANARY123\n")
    config.chmod(0o644)
    [warning] = load_settings(environ={}, dotenv_path=tmp_path / "none", config_path=config).warnings
    assert str(config) in warning and "chmod 600" in warning and "CANARY" not in warning


def test_agent_config_reads_the_user_file_and_prints_every_value_whole_in_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AGENT_DATA_DIR")  # the autouse fixture's, which would win over the file
    deep = tmp_path / ("a-rather-long-directory-name-" * 5) / "store"
    write(user_config_file(), f"AGENT_DATA_DIR={deep}\nAGENT_EMBEDDING_MODEL=text-embedding-3-small-but-longer\n")
    code, out, err = run_cli(monkeypatch, capsys, "config")
    assert code == 0, err
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert lines["data_dir"].split() == ["data_dir", "AGENT_DATA_DIR", str(deep), "user", "config", "(AGENT_DATA_DIR)"]
    assert lines["memory_writes_per_session"].split()[1] == "AGENT_MEMORY_WRITES_PER_SESSION"
    assert "text-embedding-3-small-but-longer" in lines["embedding_model"]
    assert f"settings file {user_config_file()}: read" in out
    assert f"settings file {tmp_path / '.env'}: not found" in out
    assert "…" not in out


def test_a_bad_value_in_the_user_config_is_named_with_the_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(user_config_file(), "AGENT_MEMORY_CAPACITY=0\n")
    code, out, err = run_cli(monkeypatch, capsys, "memories", "list")
    assert code == 2 and out == ""
    assert err == (f"agent: AGENT_MEMORY_CAPACITY='0' in {user_config_file()} is not valid: expected a whole number "
                   "from 1 to 10,000,000.\n")


def test_version(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(monkeypatch, capsys, "--version") == (0, f"agent {__version__}\n", "")


@pytest.mark.parametrize("argv", [["--help"], ["memories", "--help"], ["memories", "search", "--help"],
                                  ["sessions", "--help"], ["chat", "--help"]])
def test_help_shows_no_type_after_flags(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, *argv)
    assert code == 0 and "Usage: agent" in out
    assert "<bool>" not in out


@pytest.mark.slow
def test_piped_agent_config_and_version_through_the_real_process(tmp_path: Path, warm_agent: WarmAgent) -> None:
    """The pipe is what cut the values: through a real process, its stdout a pipe, the user's file read."""
    deep = tmp_path / ("long-" * 30) / "store"
    write(user_config_file(), f"AGENT_DATA_DIR={deep}\n")
    env = {**os.environ}
    env.pop("AGENT_DATA_DIR")
    config = warm_agent.run(env, "config")
    assert config.returncode == 0, config.stderr
    [row] = [line for line in config.stdout.splitlines() if line.startswith("data_dir ")]
    assert row.split() == ["data_dir", "AGENT_DATA_DIR", str(deep), "user", "config", "(AGENT_DATA_DIR)"]
    version = warm_agent.run(os.environ, "--version")
    assert version.stdout == f"agent {__version__}\n"


def test_a_settings_file_that_cannot_be_read_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent import settings_files
    from agent.errors import UsageError

    broken = tmp_path / "config.env"
    broken.write_bytes(b"AGENT_MODEL=\xff\xfe\n")
    with pytest.raises(UsageError, match=f"^The settings file {broken} cannot be read \\(it is not UTF-8 text\\)"):
        load_settings(environ={}, dotenv_path=tmp_path / "none", config_path=broken)

    opened = os.open

    def refused(path: Path, *args: int) -> int:
        if Path(path) == broken:
            raise PermissionError(13, "Permission denied", str(path))
        return opened(path, *args)

    broken.write_text("AGENT_MODEL=x\n")
    monkeypatch.setattr(settings_files.os, "open", refused)  # root reads any file, so the refusal is made
    with pytest.raises(UsageError, match=r"cannot be read \(Permission denied\)"):
        load_settings(environ={}, dotenv_path=tmp_path / "none", config_path=broken)
