"""Where the chat writes, rich or plain, and from which thread.

Replies and command output go to stdout. Notices (usage, "remembered: ...", retries, warnings) go to stdout on a
terminal and to stderr when stdout is redirected, so a script capturing stdout gets the replies alone. Background
threads (the memory writer) print through the same lock the reply stream holds, so a notice never lands inside a
reply. The console is created without a file: it writes to whatever ``sys.stdout`` is at the moment, which is
prompt-toolkit's proxy while the prompt is shown, so a notice from another thread appears above the prompt.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from rich.console import Console, RenderableType
from rich.text import Text

from agent.ui.render import escape_terminal
from agent.ui.stream import MarkdownStream, PlainStream, ReplyStream


@dataclass(frozen=True)
class Mode:
    """``interactive``: a person at a terminal types (prompt-toolkit); ``plain``: no colour, no Markdown."""

    interactive: bool
    plain: bool

    @staticmethod
    def detect(plain_flag: bool, environ: Mapping[str, str] = os.environ, once: bool = False) -> Mode:
        """``once``: one message from the command line, which nobody types at the prompt; its reply is still
        rendered when stdout is a terminal."""
        interactive = not once and sys.stdin.isatty() and sys.stdout.isatty()
        plain = (
            plain_flag
            or not (interactive or (once and sys.stdout.isatty()))
            or "NO_COLOR" in environ
            or environ.get("TERM") == "dumb"
        )
        return Mode(interactive=interactive, plain=plain)


class Output:
    """The chat's writer: ``reply_stream`` for replies, ``show`` for command output, ``notice``/``warn``/``error``
    for one-line messages. Every write holds ``lock``."""

    def __init__(self, mode: Mode, console: Console | None = None, notices: Console | None = None) -> None:
        self.mode = mode
        self.lock = threading.RLock()
        if console is None:
            console = Console(highlight=False, no_color=mode.plain, emoji=False, soft_wrap=mode.plain)
        self.console = console
        if notices is None:
            notices = console if sys.stdout.isatty() else Console(
                stderr=True, highlight=False, no_color=True, soft_wrap=True)
        self.notices = notices

    def reply_stream(self) -> ReplyStream:
        return PlainStream(self.console) if self.mode.plain else MarkdownStream(self.console)

    def show(self, renderable: RenderableType) -> None:
        with self.lock:
            self.console.print(renderable)

    def text(self, text: str) -> None:
        """Command output that may hold stored or model text: escaped, never read as markup."""
        self.show(Text(escape_terminal(text)))

    def to_terminal(self, sequence: str) -> bool:
        """Write a control sequence for the terminal itself (OSC 52, say) when stdout is one; False when it is not
        (a pipe or a file would only hold the bytes)."""
        if not sys.stdout.isatty():
            return False
        with self.lock:
            sys.stdout.write(sequence)
            sys.stdout.flush()
        return True

    def notice(self, text: str, style: str = "dim") -> None:
        with self.lock:
            self.notices.print(Text(escape_terminal(text), style="" if self.mode.plain else style))

    def warn(self, text: str) -> None:
        self.notice(text, "yellow")

    def error(self, text: str) -> None:
        self.notice(text, "bold red")
