"""The terminal side: Markdown streaming, the prompt's keys, completion and toolbar, plain-mode detection."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from rich.markdown import Markdown

from agent.ui.output import Mode
from agent.ui.prompt import EmptyLineInterrupt, SlashCompleter, TerminalReader
from agent.ui.repl import HeldInterrupts
from agent.ui.stream import LiveTail, MarkdownStream, PlainStream, finished_length
from tests.chat_fakes import ScriptedChat
from tests.repl_harness import build_chat

REPLY = "Here is **bold** text.\n\n```python\nx = 1\n\ny = 2\n```\n\n- apple\n- pear\n\nDone."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no block yet", 0),
        ("para one\n\npara two", len("para one\n\n")),
        ("```\ncode\n\nmore code", 0),
        ("```\ncode\n\n```\n\nafter", len("```\ncode\n\n```\n\n")),
        ("a\n\nb\n\nc", len("a\n\nb\n\n")),
        ("a\n\n", 3),
    ],
)
def test_finished_length_stops_at_the_last_blank_line_outside_a_fence(text: str, expected: int) -> None:
    assert finished_length(text) == expected


def render_stream(pieces: list[str], terminal: bool = True) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=60, force_terminal=terminal, color_system="truecolor" if terminal else None)
    stream = MarkdownStream(console, fps=1000)
    for piece in pieces:
        stream.feed(piece)
    stream.close()
    return buffer.getvalue()


def test_markdown_stream_prints_what_rendering_the_whole_reply_at_once_prints() -> None:
    # Off a terminal the live tail draws nothing, so the output is exactly what reaches the scrollback.
    output = render_stream([REPLY[i : i + 3] for i in range(0, len(REPLY), 3)], terminal=False)
    whole = io.StringIO()
    Console(file=whole, width=60).print(Markdown(REPLY))
    assert output == whole.getvalue()
    assert "**" not in output and "x = 1" in output and "y = 2" in output


def test_the_live_tail_shows_only_the_last_lines_of_the_unfinished_block() -> None:
    buffer = io.StringIO()
    Console(file=buffer, width=60).print(LiveTail("".join(f"line {n}  \n" for n in range(40)), 8))
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 8 and lines[0].startswith("line 32") and lines[-1].startswith("line 39")


def test_markdown_stream_escapes_control_sequences_from_the_model() -> None:
    output = render_stream(["click \x1b]8;;http://evil\x07here", "\x1b[2J\n\nnext"])
    assert "\x1b]8;;http://evil" not in output and "\x1b[2J" not in output
    assert "\\x1b]8;;http://evil\\x07here" in output


def test_plain_stream_writes_pieces_as_they_come_and_ends_the_line() -> None:
    buffer = io.StringIO()
    stream = PlainStream(Console(file=buffer))
    stream.feed("Hello **there**")
    assert buffer.getvalue() == "Hello **there**"
    stream.feed("\x1b[31m")
    stream.close()
    assert buffer.getvalue() == "Hello **there**\\x1b[31m\n"


@pytest.mark.parametrize(
    ("environ", "flag", "plain"),
    [({}, False, False), ({"NO_COLOR": "1"}, False, True), ({"TERM": "dumb"}, False, True), ({}, True, True)],
)
def test_plain_mode_detection_at_a_terminal(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], flag: bool, plain: bool
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert Mode.detect(flag, environ) == Mode(interactive=True, plain=plain)


def test_a_pipe_is_plain_and_not_interactive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert Mode.detect(False, {}) == Mode(interactive=False, plain=True)


def test_slash_completion_offers_commands_with_their_help() -> None:
    completions = list(SlashCompleter().get_completions(Document("/me"), CompleteEvent()))
    assert [c.text for c in completions] == ["/memories"]
    assert "what I remember" in completions[0].display_meta_text
    assert list(SlashCompleter().get_completions(Document("/forget pea"), CompleteEvent())) == []
    assert list(SlashCompleter().get_completions(Document("hello"), CompleteEvent())) == []


@pytest.fixture
def keys() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


def reader(tmp_path: Path, pipe: PipeInput) -> TerminalReader:
    return TerminalReader(tmp_path / "history", lambda: " toolbar ", print, pt_input=pipe, pt_output=DummyOutput())


def test_enter_sends_and_alt_enter_adds_a_line(tmp_path: Path, keys: PipeInput) -> None:
    keys.send_text("first\x1b\rsecond\r")
    assert reader(tmp_path, keys).read() == "first\nsecond"


def test_a_line_typed_ahead_with_a_cooked_enter_is_sent(tmp_path: Path, keys: PipeInput) -> None:
    keys.send_text("typed during a reply\n")
    assert reader(tmp_path, keys).read() == "typed during a reply"


def test_a_bracketed_paste_stays_one_message(tmp_path: Path, keys: PipeInput) -> None:
    keys.send_text("\x1b[200~line one\rline two\x1b[201~\r")
    assert reader(tmp_path, keys).read() == "line one\nline two"


def test_ctrl_c_clears_a_line_and_on_an_empty_line_interrupts(tmp_path: Path, keys: PipeInput) -> None:
    keys.send_text("draft\x03\x03")
    with pytest.raises(EmptyLineInterrupt):
        reader(tmp_path, keys).read()


def test_ctrl_d_on_an_empty_line_leaves(tmp_path: Path, keys: PipeInput) -> None:
    keys.send_text("\x04")
    with pytest.raises(EOFError):
        reader(tmp_path, keys).read()


def test_history_is_kept_in_a_private_file_between_runs(tmp_path: Path, keys: PipeInput) -> None:
    keys.send_text("remember me\r")
    reader(tmp_path, keys).read()
    assert "remember me" in (tmp_path / "history").read_text()
    assert (tmp_path / "history").stat().st_mode & 0o777 == 0o600
    keys.send_text("\x1b[A\r")  # Up recalls the previous line in a new run
    assert reader(tmp_path, keys).read() == "remember me"


def test_the_toolbar_shows_session_model_memories_and_context(tmp_path: Path) -> None:
    chat = build_chat(tmp_path, ScriptedChat(), session="work")
    assert chat.repl.toolbar() == " session work │ model test-model │ memories off │ context 0 tokens "


def test_ctrl_c_while_a_piece_is_drawn_waits_until_it_is_drawn() -> None:
    previous = signal.getsignal(signal.SIGINT)
    drawn = []
    with HeldInterrupts() as guard:
        with pytest.raises(KeyboardInterrupt), guard.held():
            os.kill(os.getpid(), signal.SIGINT)
            drawn.append("the whole piece")
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # waiting for the network: at once
            time.sleep(5)
    assert drawn == ["the whole piece"]
    assert signal.getsignal(signal.SIGINT) is previous


def test_the_toolbar_is_redrawn_while_the_prompt_waits_for_a_key(tmp_path: Path, keys: PipeInput) -> None:
    """The memory count is known on the memory thread after the prompt is drawn: the toolbar shows it with no
    key pressed (it said ``memories …`` until one was)."""
    shown: dict[str, str] = {"memories": "…"}
    drawn_first, drawn_count = threading.Event(), threading.Event()

    def toolbar() -> str:
        drawn_first.set()
        if shown["memories"] == "3":
            drawn_count.set()
        return f" memories {shown['memories']} "

    def store_opens() -> None:
        drawn_first.wait(60)
        shown["memories"] = "3"
        drawn_count.wait(30)
        keys.send_text("\r")  # pressed only now: the count must have been drawn before it

    opening = threading.Thread(target=store_opens)
    opening.start()
    TerminalReader(tmp_path / "history", toolbar, print, pt_input=keys, pt_output=DummyOutput()).read()
    opening.join()
    assert drawn_count.is_set(), "the toolbar was not drawn again until a key was pressed"
