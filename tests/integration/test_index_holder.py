"""The holder of the embedded Chroma index catches it up with the ledger at each search (``HeldIndex``): what
another process wrote is put in, what it forgot is dropped. A second ``SqliteLedger`` connection stands in for the
other process, as in tests/unit/test_ledger_vectors.py, which tests the ledger's own vector copies."""

from __future__ import annotations

from pathlib import Path

from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.index_holder import HeldIndex
from agent.adapters.ledger import SqliteLedger
from tests.builders import seed_ledger
from tests.helpers_store import SHA_SPACE, ShaEmbedder

USER = "default"


def write(ledger: SqliteLedger, text: str) -> str:
    """A memory and its vector copy, as a process without the index writes them."""
    [memory] = seed_ledger(ledger, USER, [text], ShaEmbedder().embed([text]), SHA_SPACE, session="t")
    return memory.id


def probe(text: str) -> list[float]:
    return ShaEmbedder().embed([text])[0]


def test_the_holder_puts_in_what_others_wrote_and_drops_what_they_forgot(tmp_path: Path) -> None:
    mine, other = SqliteLedger(tmp_path / "ledger.sqlite3"), SqliteLedger(tmp_path / "ledger.sqlite3")
    a = write(mine, "note a")
    chroma = ChromaIndex(open_client(tmp_path / "chroma", None), USER, str(tmp_path / "chroma"))
    chroma.claim(SHA_SPACE)
    held = HeldIndex(chroma, mine, USER)
    held.upsert([a], [probe("note a")])
    b = write(other, "note b")
    assert b not in chroma.ids()
    assert held.query(probe("note b"), 1)[0].id == b
    assert chroma.ids() == {a, b}
    other.delete(USER, [a])
    assert a not in {hit.id for hit in held.query(probe("note a"), 5)}
    assert chroma.ids() == {b}
    forget_clients()
