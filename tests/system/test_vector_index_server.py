"""The ``VectorIndex`` contract (``tests/integration/test_vector_index_contract.py``) over the fifth implementation:
Chroma behind a real ``chroma run`` server, as the machines of a shared deployment reach it. Each test writes to
collections of its own, named by its ledger's store id as a machine's are, so the tests share one server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent.adapters.chroma_index import ChromaIndex, open_client
from agent.adapters.ledger import SqliteLedger
from agent.ports import VectorIndex
from tests.builders import USER
from tests.integration import test_vector_index_contract as contract

# One worker of a parallel run starts the module's Chroma server, not each (pyproject.toml: loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("vector_index_server")]


class TestServerChroma(contract.TestVectorIndex):
    @pytest.fixture
    def index(self, chroma_url: str, ledger: SqliteLedger) -> Iterator[VectorIndex]:
        yield ChromaIndex(open_client(None, chroma_url), USER, chroma_url, namespace=ledger.store_id(), remote=True)
