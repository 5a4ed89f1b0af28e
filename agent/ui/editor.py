"""A memory's text in the user's editor (``$VISUAL``, ``$EDITOR``, else ``vi``), for ``/edit`` and
``agent memories edit``.

The text goes to a file in a private temporary directory (0700, removed afterwards), the editor runs in the
foreground on the same terminal, and what the file holds when it exits is the new text. An editor that exits
with a failure status (``:cq`` in vi) changes nothing, as git does with a commit message.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from agent.errors import UsageError


def edit_text(text: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """``text`` as the user left it in the editor, stripped; None when the editor failed (nothing to change)."""
    editor = environ.get("VISUAL") or environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="agent-edit-") as directory:
        path = Path(directory) / "memory.txt"
        path.write_text(text + "\n", encoding="utf-8")
        try:
            code = subprocess.call([*shlex.split(editor), str(path)])
        except (OSError, ValueError) as exc:  # not found, not executable, or quotes that do not close
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise UsageError(f"Cannot run the editor {editor!r} ({why}): set EDITOR to one that exists.") from exc
        if code != 0:
            return None
        return path.read_text(encoding="utf-8", errors="replace").strip()
