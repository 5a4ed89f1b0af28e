"""Fixtures of the system tier that several of its modules share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers_store import chroma_server


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a real ``chroma run`` that the tests of one module share (mark the module ``xdist_group`` so one
    worker starts it, not each); each test keeps to collections of its own (a user or a store id of its own)."""
    with chroma_server(tmp_path_factory.mktemp("chroma-server") / "store") as running:
        yield running.url
