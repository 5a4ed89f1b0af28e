"""The ids a process put into its Chroma index since its last catch-up (``HeldIndex``), held in 16 bytes each.

Nothing reads them until the next catch-up, and a bulk write (an import, a rebuild) runs none between its calls: an
import of 100,000 memories held all 100,000 ids to its end as a set of strings, 13 MB (81 bytes a string and the
set's table) at the moment its peak memory is reached. A memory's id is 32 hex digits (``domain.memory_id``), so it is
kept here as the 16 bytes they spell, one after the other, 1.6 MB for the same 100,000; an id of any other form is kept
as it is. The catch-up asks for them as a set once (``ids``), when the import's runs are over.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_MEMORY_ID = re.compile(r"[0-9a-f]{32}")  # what ``memory_id`` makes: spelled by 16 bytes, read back the same
_WIDTH = 16


class WrittenIds:
    """A set of ids that is added to a call at a time, has a few taken out, and is read whole (``ids``)."""

    def __init__(self) -> None:
        self._packed = bytearray()  # memory ids, 16 bytes each, in the order written (one written twice is twice)
        self._other: set[str] = set()  # ids of any other form
        self._dropped: set[str] = set()  # memory ids taken out since they were packed

    def update(self, ids: Iterable[str]) -> None:
        for mid in ids:
            if _MEMORY_ID.fullmatch(mid):
                self._packed += bytes.fromhex(mid)
                self._dropped.discard(mid)
            else:
                self._other.add(mid)

    def difference_update(self, ids: Iterable[str]) -> None:
        for mid in ids:
            if not _MEMORY_ID.fullmatch(mid):
                self._other.discard(mid)
            elif self._packed:
                self._dropped.add(mid)

    def clear(self) -> None:
        self._packed = bytearray()
        self._other.clear()
        self._dropped.clear()

    def ids(self) -> set[str]:
        """Every id added and not taken out since."""
        packed = self._packed
        kept = {packed[at : at + _WIDTH].hex() for at in range(0, len(packed), _WIDTH)}
        return (kept - self._dropped) | self._other

    def __len__(self) -> int:
        return len(self.ids())
