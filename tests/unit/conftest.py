"""The unit tier: tests of code alone, in this process. A test here that connects a socket, starts a process or
loads the embedding model fails, so the tier stays quick (``make test-fast``) and a test that needs more moves to
``tests/integration/`` or ``tests/system/`` rather than slowing every quick run (see ``tests/README.md``)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent.adapters.local_embedder import LocalEmbedder


def _refuse(what: str) -> object:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a unit test {what}: it belongs in tests/integration/, not tests/unit/")

    return refused


@pytest.fixture(scope="session")
def model_cache() -> Path:
    """In place of the warmed model of ``tests/conftest.py``: a unit test that asks for the model fails before it
    is converted."""
    pytest.fail("a unit test asked for the embedding model: it belongs in tests/integration/, not tests/unit/",
                pytrace=False)


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's ``tmp_path`` (every test of the tier has one: ``isolated_user_state``), without its bookkeeping: a
    private directory of the test's own under the run's base directory, named after the test. pytest numbers each
    one by listing every directory the run made so far, and points a ``...current`` symlink at the newest: over
    the tier's 900 tests that was 2-4 s of a run of 15-25 s, more than most of the tests took."""
    name = re.sub(r"\W", "_", request.node.name)[:30]
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=tmp_path_factory.getbasetemp()))


@pytest.fixture(autouse=True)
def nothing_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test that connects a socket, starts a process or loads the model, at the call that does it."""
    monkeypatch.setattr(socket.socket, "connect", _refuse("connected a socket"))
    monkeypatch.setattr(socket.socket, "connect_ex", _refuse("connected a socket"))
    # Its start, not __init__: a Popen that raises from __init__ fails again in __del__, with no returncode.
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _refuse("started a process"))
    monkeypatch.setattr(os, "fork", _refuse("forked a process"))
    monkeypatch.setattr(LocalEmbedder, "_load", _refuse("loaded the embedding model"))
