"""``/undo``, ``/pause`` and ``--read-only`` through the ``agent`` command with piped input (in this process,
``tests.cli_harness``), and the receipt of a memory in its place in a real terminal: under the reply it came from
and above the next prompt. Real local embedder and Chroma store; the fake OpenAI server answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env, screen_text, session_file
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"
SISTER = "My sister Ottilie lives in Lisbon with her two cats"
NEEDLES = (b"ottilie",)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def usage_free(text: str) -> str:
    """A transcript with the token counts of its usage lines taken out (they follow the prompt's size)."""
    return re.sub(r"↳ [\d,]+ tokens in · [\d,]+ out", "↳ usage", text)


def leaks(*paths: Path) -> list[str]:
    """Every file under ``paths`` whose raw bytes hold a needle, whatever its case."""
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return [str(f) for f in files if any(n in f.read_bytes().lower() for n in NEEDLES)]


@pytest.mark.slow
def test_undo_through_pipes_takes_back_the_turn_and_its_memory_leaving_no_byte(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    env = agent_env(fake)
    result = invoke("--lines", "-s", "monday", stdin=f"{PEANUTS}\n{SISTER}\n/undo\nWhat do you know?\n", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\nNoted.\nNoted.\n"
    assert usage_free(result.stderr) == (
        "↳ usage\n"
        f"remembered: {PEANUTS}\n"
        "↳ usage\n"
        f"remembered: {SISTER}\n"
        f"Undid turn 2 (you: {SISTER}); forgot the memory it wrote: {SISTER}.\n"
        "↳ usage\n"
    )
    assert fake.user_messages()[-2:] == [PEANUTS, "What do you know?"], "the undone turn left the context"
    turns = session_file(tmp_path, "monday")["turns"]
    assert isinstance(turns, list) and [t["user"] for t in turns] == [PEANUTS, "What do you know?"]
    assert leaks(tmp_path / "data") == []
    listed = invoke("memories", "list", "--json", env=env)
    assert listed.returncode == 0 and PEANUTS in listed.stdout and "Ottilie" not in listed.stdout


@pytest.mark.slow
def test_read_only_and_no_memory_together_are_refused(fake: FakeOpenAI) -> None:
    result = invoke("--lines", "--read-only", "--no-memory", stdin="hello\n", env=agent_env(fake))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("agent: Use --no-memory (no memory at all) or --read-only (recall, never write), not "
                             "both.\n")


@pytest.mark.slow
def test_read_only_through_pipes_recalls_and_writes_nothing(fake: FakeOpenAI, tmp_path: Path) -> None:
    env = agent_env(fake)
    assert invoke("memories", "add", PEANUTS, env=env).returncode == 0
    before = invoke("memories", "list", "--json", env=env).stdout
    result = invoke("--lines", "--read-only", "-s", "ro", stdin=f"Any snack ideas?\n{SISTER}\n/remember {SISTER}\n",
                    env=env)

    assert result.returncode == 0, result.stderr
    assert PEANUTS in fake.system_prompts()[0], "recall goes on"
    assert usage_free(result.stderr) == (
        "↳ usage\n↳ usage\nMemory is read-only in this run (--read-only): nothing is remembered.\n")
    assert invoke("memories", "list", "--json", env=env).stdout == before, "nothing written, not even last_seen"
    data = tmp_path / "data"
    assert (data / "ledger.sqlite3").is_file() and leaks(data / "ledger.sqlite3", data / "chroma") == []


@pytest.mark.slow
def test_in_a_terminal_the_receipt_comes_before_the_next_prompt_and_session_shows_the_pause(fake: FakeOpenAI) -> None:
    with Terminal(agent_env(fake), "-s", "tty") as terminal:
        terminal.expect("›")
        terminal.type("/memories\r")  # answered once the store is open and the embedding model loaded
        terminal.expect("No memories yet")
        terminal.expect("›")
        terminal.type(f"{PEANUTS}\r")
        terminal.expect("Noted")
        terminal.expect("tokens in")
        before_prompt = screen_text(terminal.expect("›"))
        assert before_prompt.endswith(f"remembered: {PEANUTS} ›"), before_prompt
        terminal.type("/pause\r")
        terminal.expect("Paused: nothing you say is remembered until /resume")
        terminal.expect("›")
        terminal.type("/session\r")
        terminal.expect(r"memory +1 memory, paused")
        terminal.expect("›")
        terminal.type(f"{SISTER}\r")
        terminal.expect("Noted")
        terminal.expect("tokens in")
        assert "remembered" not in screen_text(terminal.expect("›"))
        terminal.type("/undo\r")
        terminal.expect(re.escape(f"Undid turn 2 (you: {SISTER}); it wrote no memory."))
        terminal.expect("›")
        terminal.type("\x04")
        assert terminal.wait() == 0
