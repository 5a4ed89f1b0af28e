"""``agent memories import`` within the limits every other write keeps (issue 19, item 8), and readers that survive
what a store already holds.

Before: ``created_at`` of ``Infinity``, ``1e20`` or ``-1e15`` was stored, then ``list``, ``list --json``,
``search``, ``profile`` and the Markdown export crashed with tracebacks and every chat recall failed; a ``turn`` of
2**70 was a traceback and ``NaN`` "NOT NULL constraint failed". Importing 20 into a store of capacity 10 holding 8
said "20 new" and evicted all 8 in silence. A file was read whole (1.9 GB for a million lines of one memory), and
``import /dev/zero`` grew without end."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.adapters.local_embedder import LocalEmbedder
from agent.adapters.sql_codec import row_to_record
from agent.config import load_settings
from agent.domain import LATEST, Quote
from agent.wiring import open_memory
from tests.builders import record
from tests.cli_harness import invoke
from tests.e2e_helpers import agent, agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.warm_agent import ROOT

pytestmark = pytest.mark.usefixtures("model_cache")

GOOD = {"text": "I keep bees on the roof", "kind": "explicit", "created_at": 1_700_000_000.0}


def import_lines(tmp_path: Path, *lines: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    done = invoke("memories", "import", str(path), env=env)
    return done.returncode, done.stdout, done.stderr


def listed() -> list[dict[str, object]]:
    done = invoke("memories", "list", "--json")
    assert done.returncode == 0, done.stderr
    result: list[dict[str, object]] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(("line", "problem"), [
    ('{"text": "I keep bees", "created_at": Infinity}', "Infinity is not a JSON number"),
    ('{"text": "I keep bees", "created_at": NaN}', "NaN is not a JSON number"),
    ('{"text": "I keep bees", "created_at": 1e400}', "created_at inf is not a date a memory can have"),
    ('{"text": "I keep bees", "created_at": 1e20}', "created_at 1e+20 is not a date a memory can have"),
    ('{"text": "I keep bees", "created_at": -1e15}', "created_at -1000000000000000.0 is not a date a memory can have"),
    ('{"text": "I keep bees", "created_at": 5, "last_seen": -Infinity}', "-Infinity is not a JSON number"),
    ('{"text": "I keep bees", "created_at": 5, "last_seen": 1e19}', "last_seen 1e+19 is not a date a memory can have"),
    ('{"text": "I keep bees", "created_at": 5, "superseded_at": 1e300}', "superseded_at 1e+300 is not a date"),
    ('{"text": "I keep bees", "created_at": 5, "restated": [{"text": "bees", "session": "s", "turn": 1, '
     '"at": 1e99}]}', "a quote's date 1e+99 is not a date"),
    (f'{{"text": "I keep bees", "created_at": 5, "turn": {2**70}}}', f"turn {2**70} is not a turn number"),
    ('{"text": "I keep bees", "created_at": 5, "turn": -1}', "turn -1 is not a turn number"),
    (f'{{"text": "I keep bees", "created_at": 5, "restated": [{{"text": "bees", "session": "s", "turn": {2**40}}}]}}',
     f"turn {2**40} is not a turn number"),
    ('{"text": "I keep bees", "created_at": 5, "source": "' + "b" * 2_001 + '"}',
     "source is 2,001 characters long, more than any memory holds (2,000)"),
    ('{"text": "I keep bees", "created_at": 5, "extra": {"context": "' + "c" * 5_000 + '"}}',
     "extra 'context' is 5,000 characters long"),
], ids=["inf", "nan", "1e400", "1e20", "-1e15", "-inf-seen", "1e19-seen", "superseded", "quote-date", "turn-2**70",
        "turn-negative", "quote-turn", "long-source", "long-extra"])
def test_a_line_with_a_value_out_of_range_refuses_the_file_with_its_line_number(
    tmp_path: Path, line: str, problem: str
) -> None:
    code, out, err = import_lines(tmp_path, json.dumps(GOOD), line)
    assert (code, out) == (2, "")
    assert err.startswith(f"agent: {tmp_path / 'in.jsonl'} line 2 is not a memory ({problem}")
    assert err.endswith("; nothing was imported. `agent memories export` writes the format import reads (one JSON "
                        "object a line).\n")
    assert "Traceback" not in err and listed() == []


def stored_by_hand(records: list[tuple[str, float, float]], embedder: LocalEmbedder) -> None:
    """Memories whose dates no reader could format, as an older version's import or a hand edit left them."""
    memory = open_memory(load_settings(), embedder)
    memory.write([
        record(text, "default", kind="explicit", session="old", turn=2**40, at=created, last_seen=seen,
               restated=(Quote(text, "old", 1, math.inf),))
        for text, created, seen in records])


BAD_DATES = [("I keep bees on the roof of my building", 1e20, math.inf),
             ("My name is Zed and I grow figs", -1e15, 1e20),
             ("I swim in the lake every morning", math.inf, -math.inf)]


def test_every_reader_survives_dates_out_of_range_already_stored(local_embedder: LocalEmbedder) -> None:
    stored_by_hand(BAD_DATES, local_embedder)
    for args in (["list"], ["list", "--json"], ["list", "--history"], ["search", "bees", "--all"],
                 ["search", "bees", "--json"], ["profile"], ["profile", "--json"], ["export"],
                 ["export", "--format", "markdown"], ["evict", "--to", "1"], ["evict", "--to", "1", "--json"],
                 ["stats"]):
        done = invoke("memories", *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    rows = listed()
    assert {row["text"] for row in rows} == {text for text, _, _ in BAD_DATES}
    assert {row["created_at"][:4] for row in rows} <= {"1969", "1970", "2999", "3000"}  # type: ignore[index]
    exported = [json.loads(line) for line in invoke("memories", "export").stdout.splitlines()]
    assert all(0 <= m["created_at"] <= LATEST and 0 <= m["last_seen"] <= LATEST for m in exported)
    assert all(m["restated"][0]["at"] == LATEST for m in exported)


@pytest.mark.slow
def test_a_chat_recalls_and_lists_memories_with_dates_out_of_range(local_embedder: LocalEmbedder) -> None:
    """The chat, a real process: before, every recall failed and ``/memories`` ended the chat."""
    stored_by_hand(BAD_DATES, local_embedder)
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        chat = agent(agent_env(fake), "--lines", stdin="tell me about my bees on the roof\n/memories\nand my figs?\n")
    assert chat.returncode == 0, chat.stderr
    assert "recall failed" not in chat.stderr and "Traceback" not in chat.stderr
    assert len(fake.chat_requests) == 2, "the chat went on after /memories"
    assert "I keep bees on the roof of my building" in fake.system_prompts()[0]
    assert "I swim in the lake every morning" in chat.stdout, "/memories listed them"


def test_a_postgresql_row_with_nan_or_infinite_dates_reads_within_range() -> None:
    """PostgreSQL's double precision holds NaN and Infinity (SQLite makes NaN a NULL, which NOT NULL refuses)."""
    row = {"id": "x", "text": "t", "kind": "explicit", "user": "u", "session": "s", "turn": 1,
           "created_at": float("nan"), "last_seen": float("inf"), "content_hash": "h", "source": "t", "extra": "{}",
           "facts": "[]", "superseded_by": "", "superseded_at": float("-inf"), "restated": '[["t", "s", 1, NaN]]'}
    record = row_to_record(row)
    assert (record.created_at, record.last_seen, record.superseded_at, record.restated[0].at) == (0.0, LATEST, 0.0,
                                                                                                   0.0)


def seed(count: int, embedder: LocalEmbedder) -> list[str]:
    """``count`` memories seen now (after any in an import file, which are older)."""
    memory = open_memory(load_settings(), embedder)
    now = time.time()
    texts = [f"I keep a note about the garden bed number {n}" for n in range(count)]
    memory.write([record(t, "default", kind="explicit", turn=0, at=now) for t in texts])
    return texts


def exported_lines(count: int, tag: str = "") -> list[str]:
    return [json.dumps({"text": f"I once wrote letter {tag}{n} to my aunt in Porto", "kind": "explicit",
                        "created_at": 1_600_000_000.0 + n}) for n in range(count)]


CAPACITY = {"AGENT_MEMORY_CAPACITY": "10"}


def test_an_import_that_would_evict_more_than_a_write_may_is_refused_whole(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    held = seed(8, local_embedder)
    code, out, err = import_lines(tmp_path, *exported_lines(20), env=CAPACITY)
    assert (code, out) == (1, "")
    assert err == (f"agent: {tmp_path / 'in.jsonl'} holds 20 memories this store does not have, and it has room for "
                   "4: it holds 8 of its capacity of 10, and an import evicts no more than 2 to make room. Nothing was "
                   "imported: raise AGENT_MEMORY_CAPACITY to 28 or more.\n")
    assert sorted(str(row["text"]) for row in listed()) == sorted(held)

    code, _, err = import_lines(tmp_path, *exported_lines(6), env=CAPACITY)
    assert code == 1 and "make room first with `agent memories evict --to 6` (then add --yes) or raise" in err
    code, _, err = import_lines(tmp_path, *exported_lines(600), env=CAPACITY)
    assert code == 1 and "holds at least 256 memories this store does not have" in err, "stopped at the first batch"
    assert len(listed()) == 8


def test_an_import_within_the_slack_evicts_as_a_write_does_and_says_each(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    seed(8, local_embedder)
    lines = exported_lines(4)
    code, out, err = import_lines(tmp_path, *lines, *lines, *seed_restatements(), env=CAPACITY)
    assert (code, err) == (0, "")
    said = out.splitlines()
    assert said[0] == "imported 5 memories: 4 new, 1 already remembered (refreshed)"
    evicted = [line for line in said[1:] if line.startswith("evicted ")]
    assert len(evicted) == 2 and all("(the least recently seen, past the capacity): I once wrote letter" in line
                                     for line in evicted), "the oldest, which are the file's"
    assert len(listed()) == 10


def seed_restatements() -> list[str]:
    return [json.dumps({"text": "I KEEP a note about the garden bed number 3", "created_at": 5.0})]


def test_a_store_over_its_capacity_still_takes_restatements(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    seed(8, local_embedder)
    code, out, _ = import_lines(tmp_path, *seed_restatements(), env={"AGENT_MEMORY_CAPACITY": "3"})
    assert (code, out) == (0, "imported 1 memory: 0 new, 1 already remembered (refreshed)\n")


def test_a_line_said_many_times_is_one_memory_seen_when_last_seen(tmp_path: Path) -> None:
    first = {**GOOD, "last_seen": 1_700_000_100.0}
    later = {**GOOD, "text": "i keep  BEES on the roof", "last_seen": 1_700_009_000.0}
    code, out, _ = import_lines(tmp_path, *[json.dumps(first)] * 1000, json.dumps(later), json.dumps(first))
    assert (code, out) == (0, "imported 1 memory: 1 new, 0 already remembered (refreshed)\n")
    [memory] = [json.loads(line) for line in invoke("memories", "export").stdout.splitlines()]
    assert (memory["text"], memory["last_seen"]) == (GOOD["text"], 1_700_009_000.0)


def test_refused_lines_are_named_up_to_fifty_and_counted(tmp_path: Path) -> None:
    secret = json.dumps({"text": "my password is hunter2hunter2", "created_at": 5.0})
    code, out, err = import_lines(tmp_path, json.dumps(GOOD), *[secret] * 120)
    assert (code, out) == (0, "imported 1 memory: 1 new, 0 already remembered (refreshed); refused 120 (below)\n")
    lines = err.splitlines()
    assert len(lines) == 51 and lines[0].startswith("agent: refused line 2: ") and "hunter2" not in err
    assert lines[-1] == "agent: and 70 more lines refused"


def test_what_is_not_a_regular_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading alone would wait for ever
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        done = invoke("memories", "import", path)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (f"agent: {path} is not a regular file: import reads an export file, or standard input "
                               "given as `-` (`agent memories export | agent memories import -`).\n")


def test_a_line_longer_than_any_memory_is_refused_with_its_number(tmp_path: Path) -> None:
    code, _, err = import_lines(tmp_path, json.dumps(GOOD), json.dumps({**GOOD, "pad": "x" * (5 << 20)}))
    assert code == 2
    assert err.startswith(f"agent: {tmp_path / 'in.jsonl'} line 2 is not a memory (longer than 4 MB, more than any "
                          "memory can be)")
    assert listed() == []


# Starts the command given and writes its peak resident memory (KB) to the file named first. The command is forked
# from this small interpreter, not from the test's worker: Linux counts the memory a process had before its exec
# in its peak (a worker of a full run holds 600 MB and more), so a child of the worker would report the worker's.
PEAK_OF = ("import os, subprocess, sys; child = subprocess.Popen(sys.argv[2:]);"
           " _, status, usage = os.wait4(child.pid, 0); open(sys.argv[1], 'w').write(str(usage.ru_maxrss));"
           " sys.exit(os.waitstatus_to_exitcode(status))")


@pytest.mark.slow
def test_standard_input_of_endless_zeros_is_refused_with_memory_for_one_line(tmp_path: Path) -> None:
    """A fresh interpreter, its standard input 600 MB of zero bytes with no newline: read as a stream, the first
    line is refused at 4 MB, with the memory of one line."""
    zeros = tmp_path / "zeros"
    with zeros.open("wb") as handle:
        handle.truncate(600 << 20)  # sparse: no disk used
    peak = tmp_path / "peak"
    with zeros.open("rb") as stdin, (tmp_path / "out").open("wb") as out, (tmp_path / "err").open("wb") as err:
        code = subprocess.run([sys.executable, "-c", PEAK_OF, str(peak), sys.executable, "-m", "agent", "memories",
                               "import", "-"], stdin=stdin, stdout=out, stderr=err, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}).returncode
    said = (tmp_path / "err").read_text()
    assert code == 2, said
    assert said.startswith("agent: standard input line 1 is not a memory (longer than 4 MB, more than any memory "
                           "can be)")
    kilobytes = int(peak.read_text())
    assert kilobytes < 600 << 10, f"peak {kilobytes >> 10} MB: the input was held whole"
