"""Forget memories a user names, for ``agent memories forget`` and the chat's ``/forget`` alike (``agent.forget``
does the forgetting, crash-safe, from every file).

One Ctrl-C policy, decided by who owns the terminal: the ledger transaction always holds Ctrl-C. In the chat
(``own`` is its session) the forget then runs to its end and ``Result.interrupted`` says a Ctrl-C came, as the
chat goes on at the prompt; a command (no ``own``) may be stopped after the transaction, and ``Interrupted`` says
that the next start finishes the scrub.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent import forget
from agent.app import queries
from agent.domain import MemoryRecord


def forget_memories(
    on_service: forget.OnService,
    records: Sequence[MemoryRecord],
    places: forget.Places,
    *,
    own: forget.OwnSession | None = None,
    everything: bool = False,
    on_begun: Callable[[int], None] | None = None,
) -> forget.Result:
    """Forget ``records`` (``everything``: every memory of the user) under the policy above."""
    return forget.forget(on_service, records, places, everything=everything, own=own, interruptible=own is None,
                         on_begun=on_begun)


def forget_ids(
    on_service: forget.OnService, ids: Sequence[str], places: forget.Places, own: forget.OwnSession | None = None
) -> tuple[list[MemoryRecord], forget.Result]:
    """Forget the memories of ``ids`` still there (one may have gone meanwhile): those memories, and the forget."""
    known = on_service(queries.by_id)
    gone = [known[memory_id] for memory_id in ids if memory_id in known]
    return gone, forget_memories(on_service, gone, places, own=own)
