"""The transcripts of the README and the manual (``docs/``), made by running the real agent: ``python -m
bench.readme_transcripts`` runs each against the fake OpenAI server (``tests/fake_openai.py``: scripted replies,
everything else real: the local embedder, the memory, what the agent printed), on a fixed clock
(``bench/fixed_clock.py``), in a fresh data directory, and writes each between its markers in README.md or the
manual's page that shows it (``docs/*.md``: ``<!-- transcript NAME -->`` and ``<!-- /transcript -->``).
``--check`` writes nothing and exits 1 when a page differs, as ``tests/system/test_readme_transcripts.py`` does: a
transcript cannot drift from what the agent prints.

A case that needs more is staged as the tests stage it: the memory index held by another process through the
agent's own lock (``agent.locking``, as an open chat holds it), the ledger held by a program in ``BEGIN EXCLUSIVE``
(as a ``sqlite3`` shell left in a transaction), a damaged index as ``tests/integration/test_corrupt_store.py``
damages it, a full disk as ``tests/system/test_disk_full.py`` makes one (``RLIMIT_FSIZE``), a forget killed where it
says the memory is forgotten as ``tests/system/test_forget_crash.py`` kills it (``tests.full_pipe``), two machines on
a real PostgreSQL (``tests/pg_server.py``) and the doctor against llama.cpp's server with Gemma 3 270M
(``tests/llama_server.py``).
A few things are not shown as printed: the temporary home is ``/home/me``, this host's name ``my-pc``, the llama.cpp
server ``SHOWN_SERVER`` and the directory of its model file ``/models``; and what no two runs print the same, the
time in a set-aside copy's name, a disk's free space and how long a step took, are ``<time>``, ``<free>`` and
``<seconds>``, and a date PostgreSQL set by its own clock (not the fixed one) is ``<date>``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agent import locking
from agent.domain import memory_id
from tests import llama_server, pg_server
from tests.fake_openai import FakeOpenAI, Reply
from tests.full_pipe import FullPipe, wait_blocked
from tests.llama_server import LlamaServer

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC).timestamp()
DECEMBER_1 = datetime(2026, 12, 1, 14, 2, tzinfo=UTC).timestamp()
FRIDAY = datetime(2026, 12, 4, 17, 30, tzinfo=UTC).timestamp()
PEANUTS = "I can't eat peanuts, they make my throat swell"
BERLIN = "I am moving to Berlin next month"
SNACKS = "Any snack ideas?"
ALLERGY = "I'm allergic to shellfish, even a little makes me ill"
HOME = "I live in Lisbon, in Alfama, near the castle"
SISTER = "My sister Ottilie lives in Lisbon with her two cats"
SISTER_ANA = "My sister Ana lives in Lisbon with her two cats"
SECRET = "my api key is sk-proj-4fJ9kQ2mX7pL1vN8bR3tY6wZ0aC5dE"
LINKED = "My recipes are at https://example.com/recipes"
CELLO = "I play the cello in an orchestra"
MYSQL = "mysql://agent:PASSWORD@db/agent"
SHOWN_HOME = "/home/me"
SHOWN_HOST = "my-pc"  # this machine's host name, which a list of machines names
LAPTOP, DESKTOP = "a03e77c41f28" + "0" * 20, "5f1c0e9a2b7d" + "0" * 20  # the machine ids, as the files would hold
# What differs from one run to the next, shown by name: the time in a set-aside copy's name (the wall clock's,
# which the fixed clock does not set), a disk's free space, a date PostgreSQL set by its own clock, a duration.
_UNSTABLE_TIME = re.compile(r"-\d{8}-\d{6}\b")
_UNSTABLE_FREE = re.compile(r" [\d.,]+ [KMGT]?B free")
_DATABASE_CLOCK = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d\b")  # what the database dates by its own clock
_UNSTABLE_SECONDS = re.compile(r"\bin \d+(?:\.\d+)? s\b")
HOLDER = "4242"  # the pid the index's lock file names, as a chat's would
ON_A_DATABASE = {"forget-pending"}  # the transcripts made on PostgreSQL
ON_A_MODEL_SERVER = {"doctor"}  # the transcripts made against a real llama.cpp server
SHOWN_SERVER = "http://127.0.0.1:8080/v1"  # the model server's address (its port is the one the OS gave)
_MARKED = re.compile(r"(<!-- transcript (?P<name>[a-z-]+) -->\n```\n)(?P<body>.*?)(```\n<!-- /transcript -->)", re.S)


@dataclass(frozen=True)
class Run:
    """One command of a transcript: as the page shows it, what the agent is given, and on which clock."""

    shown: str
    args: tuple[str, ...]
    stdin: str
    clock: float
    columns: int = 100
    files: tuple[tuple[str, str], ...] = ()  # written in the home directory (the working one) before it runs
    env: tuple[tuple[str, str], ...] = ()
    code: int = 0  # the exit status it must end with
    beside: Callable[[Path], AbstractContextManager[None]] | None = None  # another process, given the data directory
    file_size: int | None = None  # no file grows past this many bytes: writes fail as on a full disk
    killed: bool = False  # SIGKILLed at its first line of stdout (held there by a full pipe), which is not shown
    machine: str = "agent_memory_db"  # its data directory, in the home: two of them are two machines on one database


def agent(env: Mapping[str, str], run: Run) -> str:
    """What ``run`` printed, stdout and stderr in the order it printed them, after the command as shown."""
    home = env["HOME"]
    for name, content in run.files:
        (Path(home) / name).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        (Path(home) / name).write_text(content)
    command = [sys.executable, "-m", "bench.fixed_clock", str(run.clock), *run.args]
    env = {**env, "COLUMNS": str(run.columns), "AGENT_DATA_DIR": str(Path(home) / run.machine), **dict(run.env)}
    if run.killed:
        said = killed_at_first_line(command, env, home)
    else:
        with run.beside(Path(env["AGENT_DATA_DIR"])) if run.beside else contextlib.nullcontext():
            done = subprocess.run(command, input=run.stdin, env=env, cwd=home, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=600, check=False,
                                  preexec_fn=None if run.file_size is None else functools.partial(capped,
                                                                                                  run.file_size))
        if done.returncode != run.code:
            raise RuntimeError(f"agent {' '.join(run.args)} exited {done.returncode}, not {run.code}:\n{done.stdout}")
        said = done.stdout
    said = said.replace(home, SHOWN_HOME).replace(f"({socket.gethostname()}", f"({SHOWN_HOST}")
    said = _UNSTABLE_FREE.sub(" <free> free", _UNSTABLE_TIME.sub("-<time>", said))
    said = _UNSTABLE_SECONDS.sub("in <seconds> s", said)
    printed = "".join(line.rstrip() + "\n" for line in said.splitlines())  # a table pads its lines
    return f"$ {run.shown}\n{printed}"


def killed_at_first_line(command: list[str], env: Mapping[str, str], cwd: str) -> str:
    """What ``command`` printed on stderr before a SIGKILL that lands at its first write to stdout: its stdout is a
    full pipe (``tests.full_pipe``, as ``tests/system/test_forget_crash.py`` kills a forget), so it is held at that very
    write whatever the load."""
    held = FullPipe()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=held.write_end, stderr=err, env=env,
                                 cwd=cwd)
        os.close(held.write_end)
        wait_blocked(child.pid, 1)
        child.kill()
        child.wait()
        held.drain()
        err.seek(0)
        return err.read().decode()


def capped(size: int) -> None:
    """In the child, before the agent runs: files capped at ``size`` bytes (``RLIMIT_FSIZE``, SIGXFSZ ignored), so
    every write past it fails with EFBIG, as ENOSPC does on a full disk (as ``tests/system/test_disk_full.py`` does)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


@contextlib.contextmanager
def index_damaged(data: Path) -> Iterator[None]:
    """The header of the index's ``chroma.sqlite3`` overwritten, as ``tests/integration/test_corrupt_store.py``
    damages it."""
    with (data / "chroma" / "chroma.sqlite3").open("r+b") as index:
        index.write(b"this is no longer an SQLite database header".ljust(100, b"!"))
    yield


@contextlib.contextmanager
def index_held(data: Path) -> Iterator[None]:
    """The memory index held through the agent's own lock, its lock file naming ``HOLDER``, as an open chat's
    names its pid; let go after."""
    index = data / "chroma"
    locking.acquire(index, 0.0)
    try:
        fd = os.open(locking.lock_path(index), os.O_WRONLY)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{HOLDER}\n".encode("ascii"), 0)
        os.close(fd)
        yield
    finally:
        locking.release(index)


@contextlib.contextmanager
def ledger_held(data: Path) -> Iterator[None]:
    """Another program keeping the ledger in ``BEGIN EXCLUSIVE``, as a ``sqlite3`` shell left in a transaction."""
    code = ("import sqlite3, sys, time; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "db.execute('BEGIN EXCLUSIVE'); print('ready', flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(data / "ledger.sqlite3")], stdout=subprocess.PIPE,
                              text=True)
    try:
        if holder.stdout is None or holder.stdout.readline() != "ready\n":
            raise RuntimeError("the program meant to hold the ledger did not start")
        yield
    finally:
        holder.kill()
        holder.communicate()


def exported(*texts: str) -> str:
    """An export of another store holding ``texts``, in the format ``agent memories import`` reads."""
    said = {"kind": "explicit", "created_at": MONDAY, "last_seen": MONDAY, "session": "laptop", "turn": 0}
    return "".join(json.dumps({"text": text, **said}) + "\n" for text in texts)


def environment(home: Path, fake: FakeOpenAI) -> dict[str, str]:
    """A new user's: nothing of this machine's settings, the data directory in ``home``, UTC, 100 columns."""
    kept = {name: os.environ[name] for name in ("PATH", "XDG_CACHE_HOME", "LANG") if name in os.environ}
    return {**kept, "HOME": str(home), "AGENT_DATA_DIR": str(home / "agent_memory_db"), "OPENAI_BASE_URL": fake.url,
            "AGENT_EMBEDDER": "local", "TZ": "UTC", "COLUMNS": "100", "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT)}


def cases() -> dict[str, tuple[list[Reply], list[Run]]]:
    """Every transcript, by name: the replies the fake server gives in it (then "Noted.") and its commands."""
    monday_friday = [
        Run(f'printf "{PEANUTS}\\n{BERLIN}\\n" | agent --lines -s monday', ("--lines", "-s", "monday"),
            f"{PEANUTS}\n{BERLIN}\n", MONDAY),
        Run('printf "Any snack ideas?\\n/why\\n/forget 1\\n" | agent --lines -s friday', ("--lines", "-s", "friday"),
            f"{SNACKS}\n/why\n/forget 1\n", FRIDAY),
    ]
    replies = [
        Reply("Thanks for telling me — I'll keep peanuts out of any food suggestions."),
        Reply("Congratulations on the move! Berlin is a great city; ask me if you need help planning it."),
        Reply("Here are a few peanut-free snacks:\n\n- Apple slices with sunflower-seed butter\n- Hummus and carrot "
              "sticks\n- Roasted chickpeas\n\nAll of them skip peanuts, since they make your throat swell."),
    ]
    undo = [Run(f'printf "{SISTER}\\n/undo\\n" | agent --lines -s lisbon', ("--lines", "-s", "lisbon"),
                f"{SISTER}\n/undo\n", MONDAY)]
    profile = [
        Run(f'agent memories add "{ALLERGY}"', ("memories", "add", ALLERGY), "", MONDAY),
        Run(f'agent memories add "{HOME}"', ("memories", "add", HOME), "", MONDAY + 60),
        Run("COLUMNS=70 agent memories profile", ("memories", "profile"), "", FRIDAY, columns=70),
    ]
    importing = [
        Run(f'agent memories add "{SISTER_ANA}"', ("memories", "add", SISTER_ANA), "", MONDAY),
        Run("agent memories import in.jsonl", ("memories", "import", "in.jsonl"), "", FRIDAY,
            files=(("in.jsonl", exported(SISTER_ANA, SECRET, LINKED, CELLO)),)),
    ]
    database = [Run(f"AGENT_DATABASE_URL='{MYSQL}' agent memories list", ("memories", "list"), "", MONDAY,
                    env=(("AGENT_DATABASE_URL", MYSQL),), code=2)]
    held = [
        Run(f'agent memories add "{CELLO}"', ("memories", "add", CELLO), "", MONDAY),
        Run("agent memories rebuild   # while a chat holds the index", ("memories", "rebuild"), "", MONDAY + 60,
            code=1, beside=index_held),
    ]
    locked = [
        Run(f'agent memories add "{CELLO}"', ("memories", "add", CELLO), "", MONDAY),
        Run(f'agent memories add "{HOME}"   # while a sqlite3 shell holds the ledger in BEGIN EXCLUSIVE',
            ("memories", "add", HOME), "", MONDAY + 60, code=1, beside=ledger_held),
    ]
    damaged = [
        Run(f'agent memories add "{CELLO}"', ("memories", "add", CELLO), "", MONDAY),
        Run('agent memories search "music"   # after its index was damaged', ("memories", "search", "music"), "",
            MONDAY + 60, beside=index_damaged),
    ]
    full = [
        Run(f'agent memories add "{CELLO}"', ("memories", "add", CELLO), "", MONDAY),
        Run('agent memories search "music"   # on a full disk', ("memories", "search", "music"), "", MONDAY + 60,
            code=1, file_size=4096),
    ]
    sister, cello = memory_id("default", SISTER)[:8], memory_id("default", CELLO)[:8]
    cut_short = [
        Run(f'printf "{CELLO}\\n" | agent --lines -s monday', ("--lines", "-s", "monday"), f"{CELLO}\n", MONDAY),
        Run(f"agent memories forget {cello}   # killed (kill -9) as it says the memory is forgotten",
            ("memories", "forget", cello), "", MONDAY + 60, killed=True),
        Run("agent sessions list", ("sessions", "list"), "", MONDAY + 120),
    ]
    pending = [
        Run(f'agent memories add "{SISTER}"   # on the desktop', ("memories", "add", SISTER), "", MONDAY,
            files=(("desktop/machine-id", f"{DESKTOP}\n"), ("laptop/machine-id", f"{LAPTOP}\n")), machine="desktop"),
        Run(f"agent memories forget {sister}   # on the laptop, while the desktop is off",
            ("memories", "forget", sister), "", DECEMBER_1, machine="laptop"),
        Run("agent memories forget --pending", ("memories", "forget", "--pending"), "", DECEMBER_1 + 60,
            machine="laptop"),
        Run("agent memories machines", ("memories", "machines"), "", DECEMBER_1 + 60, machine="laptop"),
        Run("agent memories machines --retire 5f1c", ("memories", "machines", "--retire", "5f1c"), "",
            DECEMBER_1 + 120, machine="laptop"),
    ]
    nowhere = "postgresql://agent@127.0.0.1:1/agent"  # nothing listens there: the connection is refused
    away = [Run(f'printf "{ALLERGY}\\n" | AGENT_DATABASE_URL={nowhere} agent --lines -s away',
                ("--lines", "-s", "away"), f"{ALLERGY}\n", MONDAY, env=(("AGENT_DATABASE_URL", nowhere),))]
    doctor = [Run(f"OPENAI_BASE_URL={SHOWN_SERVER} agent doctor", ("doctor",), "", MONDAY)]
    return {"monday-friday": (replies, monday_friday), "undo": ([], undo), "narrow-profile": ([], profile),
            "import-refused": ([], importing), "database-url": ([], database), "index-held": ([], held),
            "ledger-locked": ([], locked), "index-damaged": ([], damaged), "disk-full": ([], full),
            "forget-cut-short": ([Reply("A cellist! What are you rehearsing?")], cut_short),
            "forget-pending": ([], pending), "doctor": ([], doctor),
            "memory-away": ([Reply("I'll keep shellfish out of anything I suggest.")], away)}


def transcript(name: str, database: str | None = None, model_server: LlamaServer | None = None) -> str:
    """The transcript ``name``, made by a fresh user (a data directory of their own) against a fake server of its
    own; one of ``ON_A_DATABASE`` on the PostgreSQL database ``database`` (a fresh one), one of
    ``ON_A_MODEL_SERVER`` against llama.cpp's server ``model_server`` (Gemma 3 270M, ``tests.llama_server.gemma``);
    each on a server of its own when none is given."""
    if name in ON_A_DATABASE and database is None:
        cluster = pg_server.start_cluster()
        try:
            return transcript(name, cluster.new_database())
        finally:
            pg_server.remove_cluster(cluster)
    if name in ON_A_MODEL_SERVER and model_server is None:
        with tempfile.TemporaryDirectory() as root:
            server = llama_server.gemma(Path(root))
            try:
                return transcript(name, model_server=server)
            finally:
                server.stop()
    script, runs = cases()[name]
    with FakeOpenAI(script, fallback=Reply("Noted.")) as fake, tempfile.TemporaryDirectory() as home:
        env = environment(Path(home), fake)
        if database is not None:
            env |= {"AGENT_DATABASE_URL": database, "AGENT_CHROMA_URL": ""}
            return _DATABASE_CLOCK.sub("<date>", "".join(agent(env, run) for run in runs))
        if model_server is None:
            return "".join(agent(env, run) for run in runs)
        env["OPENAI_BASE_URL"] = model_server.url
        shown = {model_server.url: SHOWN_SERVER, str(model_server.model.parent): "/models"}
        return "".join(functools.reduce(lambda text, pair: text.replace(*pair), shown.items(), agent(env, run))
                       for run in runs)


def transcripts() -> dict[str, str]:
    return {name: transcript(name) for name in cases()}


def spliced(readme: str, made: Mapping[str, str]) -> str:
    """``readme`` with each marked transcript replaced by the one made; a marker without one is an error."""
    def body(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in made:
            raise KeyError(f"a page marks a transcript {name!r} that {__name__} does not make")
        return match.group(1) + made[name] + match.group(4)

    return _MARKED.sub(body, readme)


def marked(readme: str) -> set[str]:
    return {match["name"] for match in _MARKED.finditer(readme)}


def shown(readme: str, name: str) -> str:
    """The transcript ``name`` as ``readme`` shows it ("" when it marks none)."""
    return next((match["body"] for match in _MARKED.finditer(readme) if match["name"] == name), "")


def pages() -> list[Path]:
    """The files that may show a transcript: the README and the manual's pages."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def page_of(name: str) -> Path | None:
    """The page that shows the transcript ``name`` (None when none marks it)."""
    return next((page for page in pages() if name in marked(page.read_text())), None)


def main() -> int:
    made = transcripts()
    differ = []
    for page in pages():
        text = page.read_text()
        updated = spliced(text, made)
        if updated == text:
            continue
        differ.append(page.relative_to(ROOT))
        if "--check" not in sys.argv[1:]:
            page.write_text(updated)
    if differ and "--check" in sys.argv[1:]:
        print(f"the transcripts of {', '.join(map(str, differ))} differ from what the agent prints: "
              "run python -m bench.readme_transcripts")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
