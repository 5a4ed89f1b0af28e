"""The smaller chat defects of issue 9 (item 12) and issue 13 (section 2), each fixed at its root.

``/memories`` printed every memory (16.7 MB at 50,000); ``/forget 91f1`` and ``/forget 05177021`` failed in the chat
though ``agent memories forget`` takes them; a restatement was echoed in its own words, not what is stored;
``/session`` said 0 memories before the store had opened; the write cap of a session was permanent; "1 memories";
``memories stats`` printed a Python dict; ``sessions rm`` on a session open elsewhere gave the chat's advice; a
read-only data directory stopped even ``--no-memory``, with a message about a symlink that was not there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.adapters.chroma_index import forget_clients
from agent.adapters.local_embedder import LocalEmbedder
from agent.domain import memory_id
from agent.memory import gate
from agent.memory.policy import MemoryPolicy
from agent.memory.service import CAP_WINDOW, MemoryService
from agent.ui.prompt import PipeReader
from tests.builders import add_all
from tests.chat_fakes import ScriptedChat
from tests.cli_harness import invoke
from tests.e2e_helpers import agent_env
from tests.fake_openai import FakeOpenAI, Reply
from tests.fakes import InMemoryIndex, WordHashEmbedder
from tests.helpers_store import open_memory_with
from tests.repl_harness import build_chat, memory_service, run_lines

DIARY = "I keep note number {} in my garden diary"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def diary_texts(count: int) -> list[str]:
    """``count`` notes, the last of which has an id whose first 8 characters are digits (one a listing number
    could be mistaken for)."""
    texts = [DIARY.format(n) for n in range(count - 1)]
    digits = next(DIARY.format(f"d{n}") for n in range(100_000) if memory_id("default", DIARY.format(f"d{n}"))[:8]
                  .isdigit())
    return [*texts, digits]


@pytest.mark.slow
def test_memories_pages_and_forget_takes_short_and_all_digit_ids_in_a_real_chat(
    fake: FakeOpenAI, tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    texts = diary_texts(60)
    seeded = add_all(open_memory_with(local_embedder), texts)
    forget_clients()
    ids = {text: memory_id for memory_id, text in seeded.items()}
    digit_id = ids[texts[-1]][:8]
    short_id = next(i for t, i in ids.items() if t not in (texts[10], texts[-1]) and any(c.isdigit() for c in i[:4])
                    and sum(j.startswith(i[:4]) for j in seeded) == 1)
    restated = "I KEEP note number 7 in my   garden DIARY"
    script = ["/memories", "/forget 1", "/memories --all", f"/forget {short_id[:4]}", "y", f"/forget {digit_id}",
              restated, "/session"]
    result = invoke("--lines", "-s", "garden", stdin="".join(f"{line}\n" for line in script), env=agent_env(fake))
    assert result.returncode == 0, result.stderr
    out, err = result.stdout, result.stderr
    first, _, everything = out.partition("59 memories")
    assert "the newest 50 of 60 memories" in first and "10 older memories are not shown: /memories --all" in err
    assert ids[texts[9]][:8] not in first and ids[texts[10]][:8] in first
    assert ids[texts[9]][:8] in everything and ids[texts[10]][:8] not in everything
    assert f"forgot: {texts[10]}" in err  # number 1 of the newest 50 is the 11th oldest
    assert f"memories whose ids start with {short_id[:4]}" in out and "Forget this memory? [y/N]" in err
    assert f"forgot: {seeded[short_id]}" in err  # a short prefix is shown and asked about, then forgotten
    assert f"forgot: {texts[-1]}" in err  # the all-digit id is an id, not a number of the listing
    assert err.count("Forgot 1 memory.") == 3 and "1 memories" not in out + err
    assert "already remembered: I keep note number 7 in my garden diary" in err  # what is stored, not the echo
    assert "memory   57 memories" in out
    listed = invoke("memories", "list", "--limit", "5", "--json", env=agent_env(fake))
    left = [t for t in texts if t not in (texts[10], seeded[short_id], texts[-1])]
    assert [m["text"] for m in json.loads(listed.stdout)] == left[-5:]


def test_session_says_counting_until_the_store_has_opened_then_the_count(tmp_path: Path) -> None:
    opened = threading.Event()

    def slow_store() -> MemoryService:
        opened.wait(30)
        service = memory_service(tmp_path / "m")
        for n in range(3):
            service.add(DIARY.format(n))
        return service

    chat = build_chat(tmp_path, ScriptedChat(), memory=slow_store)

    def lines() -> Iterator[str]:
        yield "/session\n"
        opened.set()
        assert chat.repl.worker is not None
        chat.repl.worker.call(lambda service: None)  # the store has opened
        yield "/session\n"

    chat.repl.use(PipeReader(chat.repl.out.notice, lines()))  # type: ignore[arg-type]
    chat.repl.run()
    assert "memory   counting… (the store is still opening)" in chat.out
    assert "memory   3 memories" in chat.out


def test_the_write_cap_counts_a_sessions_new_memories_of_the_last_24_hours(tmp_path: Path) -> None:
    from agent.adapters.ledger import SqliteLedger

    now = [1_000_000.0]
    service = MemoryService(SqliteLedger(tmp_path / "ledger.sqlite3"), InMemoryIndex(), WordHashEmbedder(), "me",
                            MemoryPolicy(writes_per_session=2), clock=lambda: now[0])
    assert service.observe("I keep bees on my roof in Lisbon", session="s", turn=1).stored
    assert service.observe("My sister Ana plays the cello every Sunday", session="s", turn=2).stored
    capped = service.observe("I am learning to sail on the Tagus river", session="s", turn=3)
    assert capped.stored == () and "24 hours" in capped.skipped_reason
    restated = service.observe("I KEEP bees on my roof in   Lisbon", session="s", turn=4)
    assert restated.stored == () and "cap of 2" in restated.skipped_reason
    now[0] += CAP_WINDOW - 1
    assert not service.observe("I am learning to sail on the Tagus river", session="s", turn=5).stored
    now[0] += 2  # a day after the first two: a long-lived session writes again
    assert service.observe("I am learning to sail on the Tagus river", session="s", turn=6).stored


def test_a_turn_withheld_as_a_secret_says_so_and_other_turns_the_gate_drops_pass_in_silence(tmp_path: Path) -> None:
    chat = build_chat(tmp_path, ScriptedChat("Noted.", "Sure.", "Hi."),
                      memory=lambda: memory_service(tmp_path / "m"))
    done = run_lines(chat, "My gym PIN is 5521 by the way", "what's the capital of Peru?", "hello there")
    notices = [line for line in done.log.splitlines() if line.startswith("memory:")]
    assert notices == ["memory: not saved (looks like a secret (a key, password or card number): never stored)"]
    assert "5521" not in "\n".join(notices)
    withheld = memory_service(tmp_path / "other").observe("My gym PIN is 5521 by the way", session="s", turn=1)
    assert withheld.stored == () and withheld.skipped_reason == gate.SECRET_REFUSAL


def test_a_restatement_is_echoed_as_the_memory_it_refreshed(tmp_path: Path) -> None:
    chat = build_chat(tmp_path, ScriptedChat("Noted.", "Yes."), memory=lambda: memory_service(tmp_path / "m"))
    done = run_lines(chat, "I keep bees on my roof in Lisbon", "i keep BEES on my roof in lisbon")
    assert "remembered: I keep bees on my roof in Lisbon" in done.log
    assert "already remembered: I keep bees on my roof in Lisbon" in done.log
    assert "i keep BEES" not in done.log


@pytest.mark.slow
def test_stats_reads_as_lines_and_sessions_rm_of_an_open_session_says_to_leave_that_chat(
    fake: FakeOpenAI, tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    add_all(open_memory_with(local_embedder), [DIARY.format(n) for n in range(3)])
    forget_clients()
    env = agent_env(fake)
    stats = invoke("memories", "stats", env=env)
    assert stats.returncode == 0 and "{" not in stats.stdout, stats.stdout
    assert "memories         3 (explicit 3)" in stats.stdout and "on disk" in stats.stdout
    data = tmp_path / "data"
    assert f"ledger           {data / 'ledger.sqlite3'}\nindex            {data / 'chroma'}\n" in stats.stdout
    assert invoke("--lines", "-s", "open", stdin="hello\n", env=env).returncode == 0
    code = ("import sys, time; from pathlib import Path; from agent.sessions import SessionStore\n"
            "with SessionStore(Path(sys.argv[1]), 'default').lock('open'):\n"
            "    print('locked', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "data" / "sessions")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        removed = invoke("sessions", "rm", "open", env=env)
    finally:
        holder.kill()
        holder.wait()
    assert removed.returncode == 1
    assert "is open in another agent process: leave that chat (Ctrl-D or /exit), then run `agent sessions rm " \
           "open` again." in removed.stderr and "-s NAME" not in removed.stderr


def read_only_works() -> bool:
    """Whether this machine lets a test mount a directory read-only in a private mount namespace."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind -o ro /tmp /tmp"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not read_only_works(), reason="needs unshare -m and mount (root in a container, as in CI)")
def test_no_memory_chats_with_a_read_only_data_dir_and_says_once_that_saving_fails(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    env = agent_env(fake)
    data = tmp_path / "data"
    assert invoke("--lines", "--no-memory", "-s", "work", stdin="hello\n", env=env).returncode == 0
    before = (data / "sessions" / "work.json").read_bytes()
    mount = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    for name in ("work", "fresh"):
        result = subprocess.run(
            ["unshare", "-m", "sh", "-c", mount, str(data), sys.executable, "-m", "agent", "--lines", "--no-memory",
             "-s", name],
            input=b"one more line\nand another\n", capture_output=True, timeout=300, env=env)
        out, err = result.stdout.decode(), result.stderr.decode()
        assert out.count("Noted.") == 2, err  # both lines answered
        told, end = [line for line in err.splitlines() if "could not be saved (Read-only file system)" in line]
        assert "The chat goes on" in told, err
        kept = "the previous version is intact" if name == "work" else "nothing of it is on disk yet"
        lost = "The turns since the last save are" if name == "work" else "Every turn of this session is"
        assert f"; {kept}." in told and f"; {kept}." in end and f"{lost} lost when this chat ends" in end, err
        assert "symlink" not in err and "Traceback" not in err
        assert result.returncode == 1  # the turns of this run could not be kept: a script is told
    assert (data / "sessions" / "work.json").read_bytes() == before
    assert not (data / "sessions" / "fresh.json").exists()


def test_a_listing_without_more_says_nothing_about_older_memories(tmp_path: Path) -> None:
    service = memory_service(tmp_path / "m")
    for n in range(3):
        service.add(DIARY.format(n))
    first = service.list()[0].id
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: service), "/memories", "/forget 12",
                     "/forget 9999", f"/forget {first[:5]}", "no")
    assert "3 memories" in done.out and "older" not in done.log
    assert "No number 12 in the last listing: run /memories first." in done.log
    assert "No number 9999 in the last listing, and no memory id starts with 9999" in done.log
    assert "Forget this memory? [y/N]" in done.log and "Nothing forgotten." in done.log  # "/forget 2024" may be a year
    assert service.count() == 3
