"""Streaming a reply to the terminal: rendered Markdown without flicker, or plain text.

Why blocks and a short tail: re-rendering the whole reply on every token flickers, costs CPU on long replies
and, once the reply outgrows the screen, breaks scrollback. Here every finished block (text up to a blank line
outside a code fence) is printed once, as Markdown, into the normal scrollback; only the unfinished block is
live, cropped to its last few lines. Model text is escaped first, so it cannot send control sequences, and a
link is printed with its address in plain sight: a hidden terminal hyperlink could carry the user's words away
under an innocent label (the exfiltration an injected instruction asks for).
"""

from __future__ import annotations

import re
import time
from typing import Protocol

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment

from agent.ui.render import escape_terminal

TAIL_LINES = 8
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


class ReplyStream(Protocol):
    """Where a streamed reply goes: ``feed`` each piece, then ``close`` once (also after Ctrl-C)."""

    def feed(self, text: str) -> None: ...

    def close(self) -> None: ...


def markdown(text: str) -> Markdown:
    """``text`` as Markdown whose links show their address instead of hiding it behind their label."""
    return Markdown(text, hyperlinks=False)


def finished_length(text: str) -> int:
    """Length of the prefix of ``text`` made of finished Markdown blocks: up to the last blank line that is
    outside a code fence (0 when no block is finished yet)."""
    in_fence = False
    boundary = 0
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.strip():
            boundary = position
    return boundary


class Lines:
    """Already rendered lines, printed as they are."""

    def __init__(self, lines: list[list[Segment]]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines:
            yield from line
            yield Segment.line()


class LiveTail:
    """The last ``lines`` lines of a Markdown text, as rendered one column short of the console's width.

    Markdown lines are padded to the full width, and a line that fills the last column leaves the cursor where
    terminals differ: many wrap at once (the cursor goes down a row), others only with the next character. The
    live display counts rows to erase itself, so on the first kind it erased one row too few and the partial reply
    stayed on screen above its final copy (Ctrl-C, /retry). One column short, no line of it reaches the margin."""

    def __init__(self, text: str, lines: int) -> None:
        self.text = text
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        narrower = options.update_width(max(1, options.max_width - 1))
        rendered = console.render_lines(markdown(self.text), narrower, pad=False)
        yield Lines(rendered[-self.lines :])


class MarkdownStream:
    """Prints finished blocks as Markdown and keeps the unfinished one live, refreshed at most ``fps`` times a
    second. The finished part is rendered as one document and only its new lines are printed, so the spacing
    between blocks is exactly that of the whole reply rendered at once."""

    def __init__(self, console: Console, tail_lines: int = TAIL_LINES, fps: float = 12.0) -> None:
        self._console = console
        self._tail_lines = tail_lines
        self._interval = 1.0 / fps
        self._text = ""
        self._finished = 0
        self._printed = 0
        self._last_refresh = 0.0
        self._live = Live(console=console, auto_refresh=False, transient=True)
        self._live.start()

    def feed(self, text: str) -> None:
        self._text += escape_terminal(text)
        done = finished_length(self._text[self._finished :])
        if done:
            self._finished += done
            self._print_new_lines(self._text[: self._finished], self._live.console)
        now = time.monotonic()
        if done or now - self._last_refresh >= self._interval:
            self._live.update(LiveTail(self._text[self._finished :], self._tail_lines), refresh=True)
            self._last_refresh = now

    def close(self) -> None:
        self._live.stop()
        if self._text.strip():
            self._print_new_lines(self._text, self._console)

    def _print_new_lines(self, text: str, console: Console) -> None:
        lines = console.render_lines(markdown(text), console.options, pad=False)
        console.print(Lines(lines[self._printed :]))
        self._printed = len(lines)


class PlainStream:
    """Writes each piece as it comes, escaped; for pipes, ``NO_COLOR``, ``TERM=dumb`` and ``--plain``."""

    def __init__(self, console: Console) -> None:
        self._file = console.file
        self._ended_with_newline = True

    def feed(self, text: str) -> None:
        self._file.write(escape_terminal(text))
        self._file.flush()
        self._ended_with_newline = text.endswith("\n")

    def close(self) -> None:
        if not self._ended_with_newline:
            self._file.write("\n")
        self._file.flush()
