"""Settings: precedence flag > environment > .env > default, sources shown, the key never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config import SPECS, approve_dotenv, dotenv_example, load_settings
from agent.errors import UsageError


def test_precedence_and_sources(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("AGENT_MODEL=from-dotenv\nAGENT_MEMORY_K=7\nOPENAI_API_BASE=http://127.0.0.1:1/v1\n")
    approve_dotenv(dotenv)
    settings = load_settings(
        flags={"model": "from-flag", "user": None},
        environ={"AGENT_MODEL": "from-env", "AGENT_USER": "bob"},
        dotenv_path=dotenv,
    )
    assert settings.model == "from-flag"
    assert settings.user == "bob"
    assert settings.memory_k == 7
    assert settings.base_url == "http://127.0.0.1:1/v1", "OPENAI_API_BASE is accepted as an alias"
    sources = {name: source for name, _, _, source in settings.describe()}
    assert sources["model"] == "flag"
    assert sources["user"] == "environment (AGENT_USER)"
    assert sources["memory_k"] == ".env (AGENT_MEMORY_K)"
    assert sources["memory_tokens"] == "default"


def test_the_key_is_never_shown() -> None:
    settings = load_settings(environ={"OPENAI_API_KEY": "sk-test-CANARY123"}, dotenv_path=Path("/nonexistent"))
    shown = " ".join(" ".join(row) for row in settings.describe())
    assert "CANARY123" not in shown
    assert "(set)" in shown
    assert settings.resolved_embedder == "openai"


def test_invalid_value_names_the_variable() -> None:
    with pytest.raises(UsageError, match="AGENT_EMBEDDER='fast'"):
        load_settings(environ={"AGENT_EMBEDDER": "fast"}, dotenv_path=Path("/nonexistent"))


def test_env_example_lists_every_setting() -> None:
    committed = (Path(__file__).parents[2] / ".env.example").read_text()
    assert committed == dotenv_example()
    for spec in SPECS:
        assert f"# {spec.env[0]}=" in committed


def test_a_readable_env_file_with_a_key_is_warned_about(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("OPENAI_API_KEY=sk-test-CANARY123\n")
    dotenv.chmod(0o644)
    approve_dotenv(dotenv)
    [warning] = load_settings(environ={}, dotenv_path=dotenv).warnings
    assert "chmod 600" in warning and "CANARY" not in warning
    dotenv.chmod(0o600)
    assert load_settings(environ={}, dotenv_path=dotenv).warnings == ()
    (tmp_path / "plain.env").write_text("AGENT_MODEL=x\n")
    (tmp_path / "plain.env").chmod(0o644)
    approve_dotenv(tmp_path / "plain.env")
    assert load_settings(environ={}, dotenv_path=tmp_path / "plain.env").warnings == ()
