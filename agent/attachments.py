"""One message from the command line: the prompt given as arguments, the text piped in, the files given with ``-f``.

``git diff | agent "review this"`` and ``agent -f notes.md "summarise"`` send one message: the prompt, then each
attached text under its name, in a Markdown fence longer than any run of backticks inside it (so no text can close
its fence). ``cat notes.md | agent`` sends the piped text alone, and ``agent -`` reads the prompt itself from stdin.

What is remembered: the prompt is the user's own words, and the write gate judges it as it judges a line of the chat;
an attached text is a document (a diff, a log, someone's notes), sent to the model and never remembered: a piped
diff is not something the user said about themselves. So the message carries both, and ``said`` the words alone.

Only text is attached: a file with NUL bytes or that is not UTF-8 (an image, a PDF, an archive) is refused with one
line, and so is one larger than ``MAX_BYTES``, which no model's context would hold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from agent.errors import UsageError

MAX_BYTES = 512 * 1024  # about 130,000 tokens of English: more than the context of most models
STDIN = "-"
_BACKTICKS = re.compile(r"`{3,}")


@dataclass(frozen=True)
class Attachment:
    """A text attached to the message, and the name the message gives it (a path as the user typed it, or stdin)."""

    name: str
    text: str


@dataclass(frozen=True)
class OneMessage:
    """What a one-shot run sends: ``text`` the whole message, ``said`` the user's own words in it (what the write
    gate judges: empty when the message is only attached text)."""

    text: str
    said: str


def decode(data: bytes, name: str) -> str:
    """``data`` as text; ``UsageError`` naming ``name`` when it is not text or is too large to send."""
    if len(data) > MAX_BYTES:
        raise UsageError(f"{name} is larger than {MAX_BYTES // 1024:,} kB: too long to send in one message (attach a "
                         "part of it, e.g. `head -c 100000 FILE | agent ...`).")
    if b"\0" in data:
        raise UsageError(f"{name} is not a text file (it holds NUL bytes): only text can be attached.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not UTF-8 text (byte {exc.start:,} is not): only text can be attached.") from None
    return text.replace("\r\n", "\n")


def read_file(path: str) -> Attachment:
    """The text of the file ``path`` (``-f``), at most ``MAX_BYTES`` of it read: one line saying what is wrong with
    a file that cannot be attached."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory: -f attaches a text file.") from None
    except OSError as exc:
        raise UsageError(f"Cannot read {path} ({exc.strerror}).") from None
    return Attachment(path, decode(data, path))


def read_stream(stream: BinaryIO, name: str = "stdin") -> str:
    """What a pipe holds, to its end (``MAX_BYTES`` at most are kept: more is refused, not cut)."""
    chunks, size = [], 0
    while size <= MAX_BYTES and (chunk := stream.read(MAX_BYTES + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
    return decode(b"".join(chunks), name)


def fenced(attachment: Attachment) -> str:
    """``attachment`` under its name, in a fence its text cannot close."""
    longest = max((len(run) for run in _BACKTICKS.findall(attachment.text)), default=2)
    fence = "`" * (longest + 1)
    return f"{attachment.name}:\n{fence}\n{attachment.text.rstrip(chr(10))}\n{fence}"


def compose(prompt: str, attachments: Sequence[Attachment]) -> OneMessage:
    """The message of a one-shot run: the prompt, then each attachment fenced; the prompt alone is what was said.
    Without a prompt and with one attachment (``cat notes.md | agent``) the text goes as it is, unfenced."""
    if not attachments:
        return OneMessage(prompt, prompt)
    if not prompt.strip() and len(attachments) == 1:
        return OneMessage(attachments[0].text, "")
    parts = [prompt.strip()] if prompt.strip() else []
    return OneMessage("\n\n".join([*parts, *(fenced(a) for a in attachments)]), prompt.strip())

