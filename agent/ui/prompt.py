"""Reading the user's lines: prompt-toolkit at a terminal, plain lines from a pipe.

At a terminal: history kept in the data directory (0600), a completion menu when the line starts with ``/``,
Enter sends, Alt-Enter / Esc Enter add a line, a pasted block stays one message (bracketed paste),
Ctrl-C clears a line or, on an empty one, says how to leave, Ctrl-D leaves, Ctrl-X Ctrl-E opens ``$EDITOR``.
From a script (``--lines``: a pipe or a file read line by line), each line is one turn and the next line answers a
question; without ``--lines`` what is piped in is one message (``agent.attachments``), which never comes here.
"""

from __future__ import annotations

import io
import re
import sys
import termios
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Protocol, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output as PtOutput
from prompt_toolkit.patch_stdout import patch_stdout

from agent.ui.commands import COMMANDS, resolve
from agent.ui.history import private_history

PROMPT = "› "
CONTINUATION = "· "
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD. Python turns bytes that are not UTF-8 (a binary
    paste, a file in another encoding) into lone surrogates, and such a string breaks everything downstream: the
    session file, the JSON of the request and the tokenizer of the embedding model all refuse it."""
    return _SURROGATE.sub("\ufffd", text)


class EmptyLineInterrupt(KeyboardInterrupt):
    """Ctrl-C on an empty prompt: the user may be trying to leave."""


class LineReader(Protocol):
    """``read`` returns the next message (``EOFError`` at the end); ``ask`` the answer to a question."""

    def read(self) -> str: ...

    def ask(self, question: str) -> str | None: ...


class SlashCompleter(Completer):
    """Completes command names, with their help, while the line is a bare ``/word``."""

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text:
            return
        for name, command in COMMANDS.items():
            if name.startswith(text.lower()):
                yield Completion(name, start_position=-len(text), display_meta=command.help.rpartition("  ")[2])


def kept_in_history(line: str) -> bool:
    """Every line but a ``/forget`` (or a prefix of it) goes to the history file: its query may quote the very
    words it forgets ("/forget locker code 4417"), and the file is not what the user asked to keep."""
    words = line.split(maxsplit=1)
    return not (line.startswith("/") and words and resolve(words[0].lower()) == ["/forget"])


def key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=EmptyLineInterrupt())

    return bindings


@contextmanager
def typed_ahead_kept() -> Iterator[None]:
    """While a reply is pending: what the user types is neither echoed into the reply (the terminal's echo is off)
    nor taken line by line (canonical mode is off), so it waits, byte for byte, for the next prompt, which shows
    it as typed-ahead text; a Ctrl-D among it then leaves as at the prompt, once the reply is saved. Ctrl-C still
    interrupts (signals stay on). Nothing is discarded when the mode is set back (TCSANOW, not TCSAFLUSH); a
    terminal that is gone (a hangup) is left alone."""
    fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
    if fd is None:
        yield
        return
    try:
        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (termios.error, OSError):
        yield
        return
    try:
        yield
    finally:
        with suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


class PromptEnded(Exception):
    """A signal that ended the prompt from inside its event loop (``end_prompt``), carried out of it as an
    ``Exception``: the ``BaseException`` it stands for, raised there, would be caught by asyncio (which lets only
    ``KeyboardInterrupt`` and ``SystemExit`` through a callback) and shown by prompt-toolkit as an unhandled
    exception that waits for Enter, on a terminal that may be gone."""

    def __init__(self, signal_exc: BaseException) -> None:
        super().__init__(str(signal_exc))
        self.signal_exc = signal_exc


def end_prompt(exc: BaseException) -> bool:
    """End the prompt whose event loop is running the caller (a signal handler that landed in one of its callbacks:
    a closed terminal wakes the prompt at the moment SIGHUP arrives) with ``exc``; False when no prompt's callback
    is running, and raising ``exc`` there is what ends the prompt."""
    app = get_app_or_none()
    if app is None or not app.is_running or app.future is None or app.future.done():
        return False
    app.exit(exception=PromptEnded(exc))
    return True


@contextmanager
def _signals_raised() -> Iterator[None]:
    """What ``end_prompt`` carried out of the prompt, raised as the signal's own exception."""
    try:
        yield
    except PromptEnded as ended:
        raise ended.signal_exc from None


TOOLBAR_REFRESH = 0.5  # seconds


class TerminalReader:
    """prompt-toolkit input with history, completion and the key bindings above; ``toolbar`` fills the bottom
    line. Ctrl-J stays Enter: a line typed ahead while a reply streams reaches the prompt with its Enter turned
    into Ctrl-J by the terminal. ``warn`` hears about a history file that cannot be used. ``pt_input``/``pt_output``
    let tests drive it with a pipe and a dummy output."""

    def __init__(
        self,
        history: Path,
        toolbar: Callable[[], str],
        warn: Callable[[str], None],
        pt_input: Input | None = None,
        pt_output: PtOutput | None = None,
    ) -> None:
        self._session: PromptSession[str] = PromptSession(
            history=private_history(history, warn, kept_in_history),
            completer=SlashCompleter(),
            complete_while_typing=True,
            key_bindings=key_bindings(),
            bottom_toolbar=lambda: toolbar(),
            # Redrawn while the prompt waits: what it shows changes on the memory thread (the count once the store
            # opens, a write that lands late), and without a redraw it stayed ``memories …`` until a key.
            refresh_interval=TOOLBAR_REFRESH,
            prompt_continuation=CONTINUATION,
            enable_open_in_editor=True,
            input=pt_input,
            output=pt_output,
        )
        self._plain: PromptSession[str] = PromptSession(input=pt_input, output=pt_output)

    def read(self) -> str:
        with _signals_raised(), patch_stdout(raw=True):
            return valid_text(self._session.prompt(PROMPT))

    def ask(self, question: str) -> str | None:
        try:
            with _signals_raised():
                return valid_text(self._plain.prompt(question))
        except (EOFError, KeyboardInterrupt):
            return None


class PipeReader:
    """Lines from a non-terminal stdin: each line is one message; questions are answered by the next line."""

    def __init__(self, say: Callable[[str], None], stream: TextIO | None = None) -> None:
        if stream is None:
            stream = sys.stdin
            if isinstance(stream, io.TextIOWrapper):  # under a strict locale, a byte that is not UTF-8 would raise
                stream.reconfigure(errors="replace")
        self._lines: Iterator[str] = iter(stream)
        self._say = say

    def read(self) -> str:
        try:
            return valid_text(next(self._lines).rstrip("\r\n"))
        except StopIteration:
            raise EOFError from None

    def ask(self, question: str) -> str | None:
        self._say(question)
        try:
            return self.read()
        except EOFError:
            return None
