"""A stand-in for ``$EDITOR`` in tests: ``python fake_editor.py FILE`` records what FILE held in
``$FAKE_EDITOR_SAW`` (when set), then writes ``$FAKE_EDITOR_TEXT`` into FILE and exits with
``$FAKE_EDITOR_STATUS`` (0 by default), as a person saving in vi (or quitting with ``:cq``) would."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The ``$EDITOR`` that runs this file.
COMMAND = f"{sys.executable} {Path(__file__)}"


def main() -> int:
    path = Path(sys.argv[1])
    saw = os.environ.get("FAKE_EDITOR_SAW")
    if saw:
        Path(saw).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    path.write_text(os.environ.get("FAKE_EDITOR_TEXT", ""), encoding="utf-8")
    return int(os.environ.get("FAKE_EDITOR_STATUS", "0"))


if __name__ == "__main__":
    sys.exit(main())
