"""The ``VectorIndex`` contract (``agent.ports``), run over every implementation: the dict of the tests
(``tests.fakes.InMemoryIndex``, the reference), embedded Chroma, the index the holder keeps in step with the ledger
(``HeldIndex``), the mirrored one (``MirroredIndex``) and the ledger's own copies searched by brute force
(``LedgerVectors``) here, and Chroma behind a real server in the system tier
(``tests/system/test_vector_index_server.py``). A memory's vector lives beside its memory in the ledger, so each
test does what the memory service does: it puts the memories first, deletes a memory from the ledger before its
vector from the index (the ledger drops its copy with the memory, and an index kept in step with the ledger reads
the copies back), and rebuilds by a reset and a claim of the new space (which drops the ledger's copies of the
old)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client
from agent.adapters.index_holder import HeldIndex
from agent.adapters.ledger import SqliteLedger
from agent.adapters.ledger_vectors import LedgerVectors
from agent.adapters.mirrored_index import MirroredIndex
from agent.domain import memory_id
from agent.ports import VectorIndex
from tests.builders import USER, record
from tests.fakes import InMemoryIndex
from tests.helpers_store import SHA_SPACE, ShaEmbedder

TEXTS = [f"note {n}" for n in range(8)]
IDS = [memory_id(USER, text) for text in TEXTS]
VECTORS = ShaEmbedder().embed(TEXTS)


def _chroma(tmp_path: Path) -> ChromaIndex:
    return ChromaIndex(open_client(tmp_path / "chroma", None), USER, str(tmp_path / "chroma"))


MAKERS: dict[str, Callable[[Path, SqliteLedger], VectorIndex]] = {
    "fake": lambda tmp_path, ledger: InMemoryIndex(),
    "chroma": lambda tmp_path, ledger: _chroma(tmp_path),
    "held": lambda tmp_path, ledger: HeldIndex(_chroma(tmp_path), ledger, USER),
    "mirrored": lambda tmp_path, ledger: MirroredIndex(_chroma(tmp_path), ledger, USER),
    "ledger": lambda tmp_path, ledger: LedgerVectors(ledger, USER),
}


def filled(index: VectorIndex) -> VectorIndex:
    index.claim(SHA_SPACE)
    index.upsert(IDS, VECTORS)
    return index


class TestVectorIndex:
    """The contract; ``index`` is each implementation in turn, and a subclass that overrides it runs the same tests
    on another (``tests/system/test_vector_index_server.py``: Chroma behind a real server)."""

    @pytest.fixture
    def ledger(self, tmp_path: Path) -> Iterator[SqliteLedger]:
        opened = SqliteLedger(tmp_path / "ledger.sqlite3")
        opened.put([record(text) for text in TEXTS])
        yield opened
        opened.close()

    @pytest.fixture(params=sorted(MAKERS))
    def index(self, request: pytest.FixtureRequest, tmp_path: Path, ledger: SqliteLedger) -> Iterator[VectorIndex]:
        yield MAKERS[request.param](tmp_path, ledger)
        forget_clients()

    def test_a_new_index_has_no_space_and_finds_nothing(self, index: VectorIndex) -> None:
        assert (index.space(), index.count(), index.query(VECTORS[0], 5)) == (None, 0, [])

    def test_the_claimed_space_is_the_one_it_reports(self, index: VectorIndex) -> None:
        index.claim(SHA_SPACE)
        assert index.space() == SHA_SPACE

    def test_a_query_returns_at_most_k_hits_best_first_and_never_more_than_it_holds(self, index: VectorIndex) -> None:
        filled(index)
        assert index.count() == len(IDS)
        hits = index.query(VECTORS[3], 3)
        assert len(hits) == 3 and hits[0].id == IDS[3] and math.isclose(hits[0].similarity, 1.0, abs_tol=1e-4)
        assert [hit.similarity for hit in hits] == sorted((hit.similarity for hit in hits), reverse=True)
        assert {hit.id for hit in index.query(VECTORS[3], 50)} == set(IDS)

    def test_vectors_come_back_by_id_and_an_unknown_id_is_left_out(self, index: VectorIndex) -> None:
        filled(index)
        got = index.vectors([IDS[1], "unknown"])
        assert list(got) == [IDS[1]]
        assert all(math.isclose(a, b, abs_tol=1e-5) for a, b in zip(got[IDS[1]], VECTORS[1], strict=True))

    def test_an_upsert_of_a_known_id_replaces_its_vector(self, index: VectorIndex) -> None:
        filled(index)
        index.upsert([IDS[0]], [VECTORS[5]])
        assert index.count() == len(IDS)
        assert all(math.isclose(a, b, abs_tol=1e-5) for a, b in zip(index.vectors([IDS[0]])[IDS[0]], VECTORS[5],
                                                                     strict=True))

    def test_a_deleted_id_is_found_no_more_and_an_unknown_one_is_no_error(self, index: VectorIndex, ledger: SqliteLedger
                                                                          ) -> None:
        filled(index)
        ledger.delete(USER, [IDS[2]])
        index.delete([IDS[2], "unknown"])
        assert index.count() == len(IDS) - 1
        assert IDS[2] not in {hit.id for hit in index.query(VECTORS[2], 50)}
        assert index.vectors([IDS[2]]) == {}

    def test_a_reset_index_claimed_for_another_space_holds_nothing_of_the_old(self, index: VectorIndex) -> None:
        filled(index)
        index.reset()
        index.claim(("sha", "another", ShaEmbedder.dimension))
        assert (index.count(), index.query(VECTORS[0], 5)) == (0, [])
