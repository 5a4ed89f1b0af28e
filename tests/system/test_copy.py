"""``/copy``: the last reply to the clipboard as an OSC 52 sequence, written only to a terminal (over SSH it is the
local terminal that sets its clipboard); elsewhere one line says why nothing was copied."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from agent.conversation import Turn
from agent.sessions import Session, SessionStore
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.repl_harness import build_chat, run_lines

REPLY = "Try **apple** slices — or café crème ☕"
NOT_COPIED = ("Not copied: the output is not a terminal, and the clipboard is reached through one (OSC 52). "
              "`agent sessions show NAME` prints every reply.\n")


def test_copy_without_a_terminal_says_so_and_writes_no_sequence(tmp_path: Path) -> None:
    SessionStore(tmp_path / "sessions", "default").save(
        Session("s", 1.0, 2.0, [Turn("hi", REPLY), Turn("and?", "", status="failed")]))
    done = run_lines(build_chat(tmp_path, ScriptedChat(), session="s"), "/copy")
    assert done.log == NOT_COPIED and done.out == ""


def test_copy_with_no_reply_yet(tmp_path: Path) -> None:
    done = run_lines(build_chat(tmp_path, ScriptedChat()), "/copy")
    assert done.log == "No reply to copy yet.\n"


@pytest.mark.slow
def test_copy_through_pipes_writes_no_escape_into_the_output() -> None:
    with FakeOpenAI(fallback=Reply(REPLY)) as fake:
        result = invoke("--lines", "--no-memory", stdin="hello\n/copy\n", env=agent_env(fake))
    assert result.returncode == 0 and result.stdout == f"{REPLY}\n"
    assert result.stderr.endswith(f" out\n{NOT_COPIED}") and "\x1b" not in result.stdout + result.stderr


@pytest.mark.slow
def test_copy_in_a_terminal_sends_osc52_with_the_reply() -> None:
    with FakeOpenAI(fallback=Reply(REPLY)) as fake, Terminal(agent_env(fake), "--no-memory") as terminal:
        terminal.expect("›")
        terminal.type("hello\r")
        terminal.expect("tokens in")
        terminal.expect("›")
        terminal.type("/copy\r")
        terminal.expect("Copied the last reply")
        terminal.expect("›")
        terminal.type("\x04")
        assert terminal.wait() == 0
    sent = re.findall(r"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07", terminal.output)
    assert [base64.b64decode(s).decode() for s in sent] == [REPLY]
    assert "Copied the last reply (38 characters) to the clipboard" in terminal.output
