"""Shared fixtures. Every test runs with HOME, the working directory and the data directory in a temp dir and
without any OpenAI setting from the machine, so no test reads a real .env or touches agent_memory_db/."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.adapters.local_embedder import LocalEmbedder, default_model_files
from agent.adapters.local_model import CONVERSION
from agent.memory import attributes
from tests.chat_fakes import ScriptedChat
from tests.warm_agent import WarmAgent, shared

# The real PostgreSQL fixtures (pg_cluster, pg_url, own_cluster) and llama.cpp's server (gemma_server): started
# only by the tests that ask for them.
pytest_plugins = ("tests.pg_server", "tests.llama_server", "tests.truth_service")

_MACHINE_SETTINGS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_LOG")
# The size of the terminal pytest runs in: a pytest-xdist worker has COLUMNS=80 and LINES=24, which rich prefers to
# the size of the pty a test gives its agent, so a chat's lines wrapped at 80 columns in a parallel run only.
_RUNNER_TERMINAL = ("COLUMNS", "LINES")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the machine has cores. A third of the suite's time is spent waiting on
    processes and servers it started (a chat's reply, a lock held for its 2 s, a server that starts), so a worker
    per core leaves a core idle that long; measured on 2 cores: 123 s with two workers, 114 s with three."""
    return (os.cpu_count() or 1) + 1


_UNGROUPED = pytest.StashKey[bool]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Find the grouped tests ``--dist loadgroup`` did not group: pytest-xdist marks each by a suffix of its node
    id in each worker, which pytest 9.2 ignores (pytest-xdist#1386), and every worker then starts its own copy of
    a group's costly servers. Each such test fails (``pytest_runtest_setup``) rather than run the suite slower."""
    if config.getoption("loadgroup", default=False):
        for item in items:
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
                item.stash[_UNGROUPED] = True


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.stash.get(_UNGROUPED, False):
        pytest.fail("--dist loadgroup did not group this test: this pytest and pytest-xdist do not work together "
                    "(pytest-xdist#1386), see pyproject.toml", pytrace=False)


@pytest.fixture(scope="session")
def model_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the run, every pytest-xdist worker's, kept across runs in pytest's cache directory under the
    packaged model's digest and the onnxruntime version: the int8 conversion (6 s alone, 20 s on a busy machine) is
    paid once per model and onnxruntime, not at every run, by the first worker while the others wait on a lock.
    Only the tests that ask for it wait for it (``model_only_when_asked``); the unit tier never does."""
    cache = _kept_cache(request.config) or _run_dir(tmp_path_factory) / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / "cache.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        from agent.adapters.head_files import HeadFiles  # numpy: not for the unit tier

        embedder = LocalEmbedder(cache_dir=cache / "agent")
        embedder.warm_up()
        # The attribute head too, trained by the first run and loaded by every process after it (``agent`` ones
        # included: XDG_CACHE_HOME is this cache), as a user's second start loads it.
        attributes.Attributes(embedder, attributes.PROBABILITY["local"], heads=HeadFiles(cache / "agent")).warm_up()
    return cache


def _kept_cache(config: pytest.Config) -> Path | None:
    """The directory of this model and onnxruntime in pytest's cache, or None where the cache is off
    (``-p no:cacheprovider``). Named by the digest so an old conversion is never among a new one's files."""
    if getattr(config, "cache", None) is None:
        return None
    import onnxruntime

    source, _ = default_model_files()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    return config.cache.mkdir(f"model-{digest}-{CONVERSION}-ort{onnxruntime.__version__}")


def _run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's temporary directory, the parent of the pytest-xdist workers' own ones."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(autouse=True)
def isolated_user_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point all user state at ``tmp_path``: HOME, cwd (for .env), the data dir; drop machine API settings.
    The cache of derived files (``XDG_CACHE_HOME``) is ``model_only_when_asked``'s."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENT_DATA_DIR", str(tmp_path / "data"))
    for name in (*_MACHINE_SETTINGS, *_RUNNER_TERMINAL, "XDG_CONFIG_HOME", "XDG_DATA_HOME"):  # XDG_*: the user
        monkeypatch.delenv(name, raising=False)  # config file is HOME's
    for name in list(os.environ):
        if name.startswith("AGENT_") and name != "AGENT_DATA_DIR":
            monkeypatch.delenv(name, raising=False)
    yield tmp_path


@pytest.fixture(autouse=True)
def model_only_when_asked(request: pytest.FixtureRequest, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The run's warmed model cache as ``XDG_CACHE_HOME`` for a test that asks for ``model_cache`` (itself, through
    ``local_embedder``, or by ``pytestmark = pytest.mark.usefixtures("model_cache")`` for the ``agent`` processes it
    starts), so only those wait for the conversion. Any other test gets an empty cache of its own and fails if it
    loads the model: in this process at the call, in a process it started when the test ends (that process made
    the cache's ``agent`` directory, converting the model for 6-20 s)."""
    if "model_cache" in request.fixturenames:
        monkeypatch.setenv("XDG_CACHE_HOME", str(request.getfixturevalue("model_cache")))
        yield
        return
    cache = tmp_path / "unasked-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    loaded: list[bool] = []

    def refused(embedder: LocalEmbedder) -> None:
        loaded.append(True)
        raise AssertionError(_UNASKED)

    monkeypatch.setattr(LocalEmbedder, "_load", refused)
    yield
    if loaded or (cache / "agent").exists():
        pytest.fail(_UNASKED, pytrace=False)


_UNASKED = ("this test loaded the embedding model without asking for it: name the model_cache or local_embedder "
            "fixture, or mark its module pytestmark = pytest.mark.usefixtures(\"model_cache\")")


@pytest.fixture(scope="session")
def local_embedder(model_cache: Path) -> LocalEmbedder:
    """The real offline MiniLM model, loaded once per test run: tests that claim something about meaning use it."""
    from agent.adapters.head_files import HeadFiles

    embedder = LocalEmbedder(cache_dir=model_cache / "agent")
    embedder.warm_up()
    attributes.for_embedder(embedder, HeadFiles(model_cache / "agent"))  # this process's services load the head
    return embedder


@pytest.fixture(scope="session")
def warm_agent() -> WarmAgent:
    """The helper that forks each ``agent`` process a test starts (``tests.warm_agent``): one per test process."""
    return shared()


@pytest.fixture(autouse=True)
def closed_stores() -> Iterator[None]:
    """Close the embedded stores a test opened in-process, so no store lock outlives the test that took it."""
    yield
    from agent.adapters.chroma_index import forget_clients

    forget_clients()


@pytest.fixture(autouse=True)
def scripts_used_up() -> Iterator[None]:
    """A test that scripted model replies it never asked for fails: the turns it meant to test did not run."""
    ScriptedChat.unused()
    yield
    if left := ScriptedChat.unused():
        pytest.fail(f"scripted replies left unused: {left}")

