"""SIGTERM, SIGHUP and a closed terminal save the turn in flight as Ctrl-C does, then the chat ends (issue 9, 8).

Before, the default action of both signals killed the process mid-reply: neither the user's line nor the partial
reply reached the session file. Now the line and the reply as far as it got are saved, marked interrupted, pending
memory writes finish, and the exit status is the conventional 128 + the signal's number.

The chat is a real process, since the signal is the point (forked from a warm interpreter, ``tests.warm_agent``);
what it left is read in-process afterwards (``tests.cli_harness``).
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.ui.repl import HeldInterrupts, Leave
from tests.cli_harness import invoke
from tests.e2e_helpers import Terminal, agent_env, session_file, wait_for_text
from tests.fake_openai import FakeOpenAI, Reply, held_reply
from tests.warm_agent import WarmAgent

PEANUTS = "I can't eat peanuts, they make my throat swell"
STORY = " ".join(f"word{n}" for n in range(400))
# The fake server's embeddings: nothing here is about meaning, and each chat is spared loading the local model.
FAKE_EMBEDDINGS = {"AGENT_EMBEDDER": "openai"}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def interrupted_story(tmp_path: Path, name: str) -> list[dict[str, object]]:
    """The turns of session ``name``, checking its last is the story, cut short and marked interrupted."""
    turns = session_file(tmp_path, name)["turns"]
    assert isinstance(turns, list)
    last = turns[-1]
    assert last["user"] == "Tell me a long story" and last["status"] == "interrupted"
    assert str(last["reply"]).startswith("word0 word1") and "word399" not in str(last["reply"])
    return turns


@pytest.mark.slow
@pytest.mark.parametrize(("how", "code"), [("SIGTERM", 143), ("SIGHUP", 129), ("closed terminal", 129)])
def test_a_signal_or_a_closed_terminal_mid_reply_saves_the_line_and_the_partial_reply(
    fake: FakeOpenAI, tmp_path: Path, how: str, code: int, warm_agent: WarmAgent
) -> None:
    env = agent_env(fake, **FAKE_EMBEDDINGS)
    fake.add(Reply("I will keep peanuts out of it."), held_reply(STORY, 6))
    with Terminal(env, "-s", "evening") as terminal:
        terminal.expect("›")
        terminal.type(f"{PEANUTS}\r")
        terminal.expect("tokens in")
        terminal.expect("›")
        terminal.type("Tell me a long story\r")
        terminal.expect("word5")
        if how == "closed terminal":
            terminal.close()  # the kernel hangs the terminal up: SIGHUP, then reads and writes fail
        else:
            os.kill(terminal.pid, getattr(signal, how))
        terminal.wait()
    assert terminal.exit_code == code
    turns = interrupted_story(tmp_path, "evening")
    assert [t["status"] for t in turns] == ["complete", "interrupted"]
    listed = invoke("memories", "list", "--json", env=env)
    assert PEANUTS in listed.stdout  # the write of the first turn finished before the chat ended


@pytest.mark.slow
@pytest.mark.parametrize(("how", "code"), [("SIGTERM", 143), ("closed terminal", 129)])
def test_a_signal_or_a_closed_terminal_at_the_prompt_ends_the_chat_with_every_turn_saved(
    fake: FakeOpenAI, tmp_path: Path, how: str, code: int, warm_agent: WarmAgent
) -> None:
    env = agent_env(fake, **FAKE_EMBEDDINGS)
    fake.add(Reply("Noted, no peanuts."))
    with Terminal(env, "-s", "idle") as terminal:
        terminal.expect("›")
        terminal.type(f"{PEANUTS}\r")
        terminal.expect("tokens in")
        terminal.expect("›")
        if how == "closed terminal":
            terminal.close()
            terminal.wait()
        else:
            os.kill(terminal.pid, signal.SIGTERM)
            terminal.expect("SIGTERM: the session is saved")
            terminal.wait()
    assert terminal.exit_code == code
    turns = session_file(tmp_path, "idle")["turns"]
    assert isinstance(turns, list) and [(t["user"], t["status"]) for t in turns] == [(PEANUTS, "complete")]
    assert PEANUTS in invoke("memories", "list", "--json", env=env).stdout


@pytest.mark.slow
def test_sigterm_mid_reply_in_a_script_saves_the_turn(
    fake: FakeOpenAI, tmp_path: Path, warm_agent: WarmAgent
) -> None:
    fake.add(held_reply(STORY, 6))
    script, feed = os.pipe()
    with os.fdopen(feed, "wb") as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = warm_agent.start(["--lines", "-s", "piped"], agent_env(fake, **FAKE_EMBEDDINGS),
                               [script, out.fileno(), err.fileno()])
        os.close(script)
        stdin.write(b"Tell me a long story\n")
        stdin.flush()
        wait_for_text(out.fileno(), b"word5 ")
        os.kill(pid, signal.SIGTERM)
        code = warm_agent.wait(pid)
        err.seek(0)
        stderr = err.read().decode()
    assert code == 143, stderr
    turns = session_file(tmp_path, "piped")["turns"]
    assert isinstance(turns, list) and len(turns) == 1
    assert turns[0]["user"] == "Tell me a long story" and turns[0]["status"] == "interrupted"
    assert str(turns[0]["reply"]).startswith("word0 word1") and "word399" not in str(turns[0]["reply"])
    assert "SIGTERM: the session is saved" in stderr


def test_a_leaving_signal_while_a_piece_is_drawn_waits_until_it_is_drawn_and_outranks_ctrl_c() -> None:
    drawn = []
    with HeldInterrupts() as guard:
        with pytest.raises(Leave) as caught, guard.held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            drawn.append("the whole piece")
        assert caught.value.exit_code == 143
        guard.holding = True
        os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C during the save of an interrupted reply has done its job
        guard.release(interrupt=False)
    assert drawn == ["the whole piece"]
