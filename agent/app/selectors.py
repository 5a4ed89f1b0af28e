"""What a word the user typed names: a memory by a number of the last listing, by its id, or by an id prefix.

One rule for ``agent memories forget``/``edit`` and the chat's ``/forget``/``/edit``: a prefix needs at least
``MIN_PREFIX`` characters (one character would pick a memory by chance); one shorter than the ``SHOWN_ID`` the
tables show could be a typo that names another memory, so it is not named for sure and the caller asks first.
The messages stay with the callers: the command line and the chat word them for their own listings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.domain import Machine, MemoryRecord

SHOWN_ID = 8  # characters of a memory's id in the tables: enough to name one among millions
MIN_PREFIX = 4  # a shorter id prefix would pick a memory by chance in a store of thousands


@dataclass(frozen=True)
class Pick:
    """What ``token`` names: ``id`` when it names one memory, else None, with ``matches`` the ids its prefix matched
    (0 when it is too short to be a prefix); ``sure`` when it is a listing number or a whole shown id."""

    token: str
    id: str | None
    matches: int = 1
    sure: bool = True

    @property
    def short_number(self) -> bool:
        """A number too short to be an id prefix: a row number, not an id."""
        return self.token.isdigit() and len(self.token) < MIN_PREFIX

    @property
    def too_short(self) -> bool:
        return len(self.token) < MIN_PREFIX


def pick(token: str, known: Sequence[str], listing: Sequence[str] = ()) -> Pick:
    """The memory ``token`` names among the ids ``known``: a number of ``listing`` (the ids of the last listing,
    numbered from 1) first, so ``05177021`` is an id unless the listing has that many rows; else an id prefix."""
    if token.isdigit() and 1 <= int(token) <= len(listing):
        return Pick(token, listing[int(token) - 1])
    lowered = token.lower()
    found = [i for i in known if i.startswith(lowered)] if len(lowered) >= MIN_PREFIX else []
    if len(found) != 1:
        return Pick(token, None, len(found), False)
    return Pick(token, found[0], 1, len(lowered) >= SHOWN_ID)


def pick_all(tokens: Sequence[str], known: Callable[[], Sequence[str]], listing: Sequence[str] = ()) -> list[Pick]:
    """``pick`` of each token up to the first that names none (the last one returned then); ``known`` is called
    once, and only when a token is not a listing number (the chat then need not ask its memory thread)."""
    ids: Sequence[str] | None = None
    picks = []
    for token in tokens:
        if token.isdigit() and 1 <= int(token) <= len(listing):
            picks.append(pick(token, (), listing))
            continue
        if ids is None:
            ids = known()
        picks.append(pick(token, ids))
        if picks[-1].id is None:
            break
    return picks


def replaced_by_prefix(records: Sequence[MemoryRecord], prefix: str) -> list[str]:
    """The ids of the replaced (not current) memories that start with ``prefix``: what ``restore`` can take."""
    return [r.id for r in records if not r.current and r.id.startswith(prefix)]


def machine_by_prefix(machines: Sequence[Machine], given: str) -> list[Machine]:
    """The machines whose id starts with ``given`` (at least ``MIN_PREFIX`` characters, else none)."""
    token = given.strip().lower()
    return [m for m in machines if m.id.startswith(token)] if len(token) >= MIN_PREFIX else []
