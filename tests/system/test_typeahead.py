"""What the user types while a reply is pending, in a real terminal: it is not echoed into the reply, it waits for
the next prompt as typed-ahead text, and a Ctrl-D among it leaves the chat once the reply is saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_helpers import Terminal, agent_env, screen_text, session_file
from tests.fake_openai import FakeOpenAI, Reply, held_reply

STORY = " ".join(f"word{n}" for n in range(60))


@pytest.mark.slow
def test_typing_during_a_reply_waits_for_the_prompt_and_ctrl_d_leaves_after_it(tmp_path: Path) -> None:
    # each story is held after its fourth word until the test has typed: the keys come while the reply is pending
    first, second = held_reply(STORY, 4), held_reply(STORY, 4)
    with FakeOpenAI([first, Reply("Got it."), second]) as fake:
        with Terminal(agent_env(fake), "--no-memory", "-s", "ahead") as terminal:
            terminal.expect("›")
            terminal.type("Tell me a story\r")
            terminal.expect("word3")
            terminal.type("typed ahead")
            first.release()
            reply = screen_text(terminal.expect("tokens in"))
            assert "word59" in reply and "typed ahead" not in reply, "nothing typed is echoed into the reply"
            terminal.expect("›")
            terminal.expect("typed ahead")  # drawn in the next prompt, ready to edit or send
            terminal.type("\r")
            terminal.expect("Got it")
            terminal.expect("›")
            terminal.type("Another one\r")
            terminal.expect("word3")
            terminal.type("\x04")
            second.release()
            terminal.expect("word59")
            assert terminal.wait() == 0, "Ctrl-D during the reply leaves once it is done"
    assert fake.user_messages() == ["Tell me a story", "typed ahead", "Another one"]
    turns = session_file(tmp_path, "ahead")["turns"]
    assert isinstance(turns, list) and [t["status"] for t in turns] == ["complete"] * 3
    assert turns[2]["reply"] == STORY
