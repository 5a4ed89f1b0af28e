"""The fakes the other tests lean on fail loudly when a test asks too much or too little of them."""

from __future__ import annotations

import time

import pytest

from agent.domain import Message
from tests.chat_fakes import ScriptedChat
from tests.helpers_store import returns_within

HI = [Message("user", "hi")]


def test_a_scripted_reply_nobody_asked_for_is_reported() -> None:
    chat = ScriptedChat("Used.", "Never asked for.")
    assert "".join(chunk.text for chunk in chat.stream(HI, "m")) == "Used."
    assert ScriptedChat.unused() == ["Never asked for."]
    assert ScriptedChat.unused() == [], "reported once: the next test starts clean"


def test_a_request_past_the_script_fails() -> None:
    chat = ScriptedChat()
    with pytest.raises(AssertionError, match="ran out of script at request 1"):
        list(chat.stream(HI, "m"))


def test_a_call_that_waits_past_its_bound_fails_and_one_that_returns_gives_its_value() -> None:
    with pytest.raises(AssertionError, match="still waiting after 0.2 s"):
        returns_within(0.2, lambda: time.sleep(30))
    assert returns_within(30, lambda: 42) == 42
    with pytest.raises(KeyError):
        returns_within(30, lambda: {}["missing"])
