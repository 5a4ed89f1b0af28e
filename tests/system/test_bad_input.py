"""Bad input at the prompt and in stdin: a 1 MB line, NUL bytes, bytes that are not UTF-8, terminal escape sequences
and emoji. Each reaches the model and the session file in its canonical form (bytes that are not UTF-8 become
U+FFFD; ``agent.memory.canonical`` removes NUL, control characters and zero-width joiners, so what the model reads
is what the screen showed), nothing crashes, and nothing the user typed is echoed back raw to the terminal. Through
a pipe the chat runs in this process (``tests.cli_harness``; its stdin is a text wrapper over the bytes, as a
process's is); at the prompt it is the real process on a pty."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.memory.canonical import canonical
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env, session_file
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

BIG = ("lorem ipsum dolor sit amet " * 40_000)[:1_000_000]
NUL = "I like \x00 green tea a lot"
ESCAPES = "I love \x1b[2J\x1b]0;owned\x07red\x1b[0m apples\x9b2J"  # clear, window title, C1 CSI
EMOJI = "I love 🍣 and my family 👨‍👩‍👧 very much"
NOT_UTF8 = b"I like \xff\xfe\xc3 chess very much"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def users(tmp_path: Path, name: str) -> list[str]:
    turns = session_file(tmp_path, name)["turns"]
    assert isinstance(turns, list) and all(turn["status"] == "complete" for turn in turns)
    return [turn["user"] for turn in turns]


def test_bad_lines_through_a_pipe_reach_the_model_and_the_session_and_nothing_crashes(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    stdin = b"\n".join([BIG.encode(), NUL.encode(), NOT_UTF8, ESCAPES.encode(), EMOJI.encode()]) + b"\n"
    result = invoke("--lines", "-s", "pipe", stdin=stdin, env=agent_env(fake))

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\n" * 5 and "Traceback" not in result.stderr
    replaced = "I like \ufffd\ufffd\ufffd chess very much"
    lines = [canonical(line) for line in (BIG, NUL, replaced, ESCAPES, EMOJI)]
    assert users(tmp_path, "pipe") == lines
    sent = [request.body["messages"][-1]["content"] for request in fake.chat_requests]
    assert [text for text in sent if text in lines] == lines, "the model got each line as the screen showed it"
    remembered = [line for line in result.stderr.splitlines() if line.startswith("remembered:")]
    assert remembered == ["remembered: I like green tea a lot", f"remembered: {replaced}",
                          "remembered: I love [2J]0;ownedred[0m apples2J",
                          f"remembered: {canonical(EMOJI)}"], "the 1 MB line is a pasted document, not a memory"
    assert "\x1b" not in result.stdout + result.stderr and "\x9b" not in result.stdout + result.stderr


@pytest.mark.slow
def test_bad_input_at_the_terminal_prompt(fake: FakeOpenAI, tmp_path: Path) -> None:
    with Terminal(agent_env(fake), "-s", "tty") as terminal:
        for keys in (NOT_UTF8, f"\x1b[200~{ESCAPES}\x1b[201~", f"\x1b[200~{NUL}\x1b[201~", EMOJI,
                     f"\x1b[200~{BIG}\x1b[201~"):
            terminal.expect("›")
            terminal.type(keys)
            terminal.type("\r")
            terminal.expect("tokens in")
        terminal.expect("›")
        terminal.type("/memories\r")
        listing = terminal.expect("/forget N forgets")
        terminal.expect("›")
        terminal.type("\x04")
        assert terminal.wait() == 0
    assert users(tmp_path, "tty") == [canonical(line) for line in ("I like \ufffd\ufffd\ufffd chess very much", ESCAPES,
                                                                    NUL, EMOJI, BIG)]
    assert "\x1b]0;owned" not in terminal.output and "\x1b[2J" not in terminal.output
    assert "]0;ownedred" in listing and "🍣" in listing and "Traceback" not in terminal.output


def test_a_strict_locale_reads_bytes_that_are_not_utf8_as_replacement_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent.ui.prompt import PipeReader

    stdin = io.TextIOWrapper(io.BytesIO(NOT_UTF8 + b"\nnext\n"), encoding="utf-8", errors="strict")
    monkeypatch.setattr("sys.stdin", stdin)
    reader = PipeReader(print)
    assert [reader.read(), reader.read()] == ["I like \ufffd\ufffd\ufffd chess very much", "next"]
