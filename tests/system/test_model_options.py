"""Model aliases (``AGENT_MODEL_ALIASES``), the cost line for OpenAI's own API, and shell completion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.config import load_settings, user_config_file
from agent.errors import UsageError
from agent.pricing import PRICES_DATE, price, priced_endpoint
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env, screen_text
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, run_lines
from tests.warm_agent import shared


def test_an_alias_names_its_model_on_the_command_line_and_in_the_config() -> None:
    with FakeOpenAI(fallback=Reply("ok")) as fake:
        env = agent_env(fake, AGENT_MODEL_ALIASES="fast=fake-small, smart=fake-large")
        assert invoke("--no-memory", "-m", "smart", "hi", env=env).returncode == 0
        assert fake.chat_requests[-1].body["model"] == "fake-large"
        config = user_config_file()
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("AGENT_MODEL=fast\n")
        assert invoke("--no-memory", "hi", env=env).returncode == 0
        assert fake.chat_requests[-1].body["model"] == "fake-small"
        shown = invoke("config", env=env)
        chat = invoke("--no-memory", "--lines", "-s", "m", stdin="/model smart\nagain\n", env=env)
    row = next(line for line in shown.stdout.splitlines() if line.startswith("model "))
    assert "fake-small" in row and "user config (AGENT_MODEL), alias fast (AGENT_MODEL_ALIASES)" in row
    assert "fast=fake-small, smart=fake-large" in shown.stdout
    assert "Now talking to fake-large" in chat.stderr
    assert fake.chat_requests[-1].body["model"] == "fake-large"


@pytest.mark.parametrize(("raw", "said"), [
    ("fast", "'fast' is not NAME=MODEL"),
    ("fast=a,fast=b", "'fast' is given twice"),
    ("f/st=gpt-4o", "'f/st' is not an alias name"),
])
def test_a_wrong_alias_setting_is_refused_before_anything_opens(raw: str, said: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=said):
        load_settings(environ={"AGENT_MODEL_ALIASES": raw}, dotenv_path=tmp_path / "none",
                      config_path=tmp_path / "none")


def test_prices_are_known_for_openai_models_and_their_snapshots_only() -> None:
    mini = price("gpt-4o-mini")
    assert mini is not None and (mini.input, mini.output) == (0.15, 0.60)
    assert price("gpt-4o-mini-2024-07-18") == mini
    dated = price("gpt-4o-2024-05-13")
    assert dated is not None and dated.input == 5.00  # a snapshot the table names costs its own price
    assert price("llama3.2") is None and price("/models/gemma.gguf") is None
    assert mini.cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert priced_endpoint(None) and priced_endpoint("https://api.openai.com/v1")
    assert not priced_endpoint("http://127.0.0.1:11434/v1") and not priced_endpoint("https://api.openai.com.evil/v1")


def test_the_usage_line_adds_the_estimated_cost_where_prices_apply(tmp_path: Path) -> None:
    built = build_chat(tmp_path, ScriptedChat("Four."))
    built.repl.price = lambda model: price("gpt-4o-mini")
    done = run_lines(built, "what is 2+2")
    [usage] = [line for line in done.log.splitlines() if line.startswith("↳")]
    tokens_in = int(usage.split()[1].replace(",", ""))
    cost = (tokens_in * 0.15 + 1 * 0.60) / 1_000_000
    assert usage.endswith(f"out · ~${cost:.6f} (estimate, gpt-4o-mini prices of {PRICES_DATE})")


def test_a_local_server_shows_no_cost_whatever_the_model_is_called() -> None:
    with FakeOpenAI(fallback=Reply("ok")) as fake:
        result = invoke("--no-memory", "-m", "gpt-4o-mini", "hi", env=agent_env(fake))
    assert result.returncode == 0 and "↳" in result.stderr and "$" not in result.stderr


def test_shell_completion_is_shown_installed_and_completes(tmp_path: Path) -> None:
    """typer finds the shell from the processes above the command (shellingham), so it is run from bash, as a
    user at a bash prompt runs it."""
    env = {**os.environ, "HOME": str(tmp_path)}
    command = str(Path(sys.executable).with_name("agent"))

    def from_bash(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", '"$@"; exit $?', "bash", command, *args], env=env, capture_output=True,
                              text=True, timeout=300, check=False)

    shown = from_bash("--show-completion")
    assert shown.returncode == 0, shown.stderr
    assert "_AGENT_COMPLETE=complete_bash" in shown.stdout
    assert "complete -o default -F _agent_completion agent" in shown.stdout
    installed = from_bash("--install-completion")
    assert installed.returncode == 0, installed.stderr
    assert "_AGENT_COMPLETE=complete_bash" in (tmp_path / ".bash_completions" / "agent.sh").read_text()
    assert "source '" in (tmp_path / ".bashrc").read_text()

    def complete(words: str, index: int) -> list[str]:
        done = shared().run({**env, "_AGENT_COMPLETE": "complete_bash", "COMP_WORDS": words,
                             "COMP_CWORD": str(index)})
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("agent sess", 1) == ["sessions"]
    assert complete("agent sessions se", 2) == ["search"]
    assert complete("agent --no-s", 1) == ["--no-session"]


def test_one_shot_output_at_a_terminal_is_rendered_and_the_chat_is_not_opened(tmp_path: Path) -> None:
    with FakeOpenAI(fallback=Reply("**bold** answer")) as fake, \
            Terminal(agent_env(fake), "--no-memory", "what is 2+2") as terminal:
        assert terminal.wait() == 0
    assert "bold answer" in screen_text(terminal.output) and "\x1b[1mbold" in terminal.output  # Markdown, rendered
    assert "›" not in terminal.output and "/help lists the commands" not in terminal.output  # no prompt, no banner
