"""Every terminal remembers (issue 11 §1): any number of ``agent`` processes on one data directory read and write
memory at once, lose nothing, and never wait for each other's lock.

Real processes throughout, as the behaviour is about processes, each forked from one warm interpreter
(``tests.warm_agent``, whose helper runs any number of them at once) rather than started afresh: piped
``agent`` chats against the fake OpenAI server (its embeddings too, so a process starts without loading the local
model) and ``agent memories ...`` commands beside them. One scenario, one shared set of writers, checked by every
assertion: three chats and two ``agent memories add`` loops of 50 facts each at once, ``kill -9`` of any of them at
moments of its own for 20 rounds, each killed writer started again with what it has not acknowledged.

Everything is judged by state: a memory is acknowledged when the test has read its ``remembered`` line (the chat's
receipt, the command's output), printed only once the ledger committed it; whatever a killed process printed before
it died counts. Every wait is for a line, an exit or a count, with a timeout only a hang reaches. No refusal ("is
using the memory store"), no chat without memory, no failure but the one line of a ledger held too long (then the
writer says nothing was written, and writes it again) may appear anywhere.
"""

from __future__ import annotations

import json
import random
import re
import signal
import sqlite3
import threading
import time
from array import array
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from agent import locking, wiring
from agent.adapters.chroma_index import forget_clients
from agent.adapters.ledger import SqliteLedger
from agent.config import load_settings
from tests.e2e_helpers import env_for, fact, prompt_for, question
from tests.fake_openai import FakeOpenAI, Reply, hashed_embedding
from tests.piped_chat import PipedAgent
from tests.warm_agent import WarmAgent

FACTS = 50
CHATS = ("chata", "chatb", "chatc")
LOOPS = ("loopa", "loopb")
ROUNDS = 20
REFUSED = "is using the memory store"
# The one line of a ledger another process held too long, after which the command is tried again. A write waits 2 s
# for another's transaction; a read is kept out too while SQLite recovers or cleans up the log of a writer killed
# -9, or of the last connection to close (sqlite.org/wal.html, "Sometimes Queries Return SQLITE_BUSY"), which a
# loaded machine can stretch past that wait. Either way the line names the ledger and nothing acknowledged is lost.
LOCKED = re.compile(r"stayed locked by another process for over \d+ s(, so nothing was written)?: try again")
WAIT = 300.0  # only a hang gets near it
# A chat's receipt ("(turn 3) remembered: ..." when it lands late) and the command's ("remembered 1a2b3c4d: ...").
CHAT_ACK = re.compile(r"^(?:\(turn \d+\) )?(?:remembered|already remembered|remembered again): (.*)$")
ADD_ACK = re.compile(r"^(?:remembered|already remembered|remembered again) [0-9a-f]{8}: (.*)$")


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


# Said in a chat, where the gate decides: a statement about the user (a friend's home alone is hearsay, not kept).
SAID = "I live in the town of saidt0q with my friend saidf0k"


class Chat:
    """One terminal's chat told its 50 facts; each ``kill`` is followed by a new chat (a session of its own) told
    the facts not acknowledged yet."""

    def __init__(self, env: Mapping[str, str], name: str) -> None:
        self.env, self.name = env, name
        self.facts = [fact(name, n) for n in range(FACTS)]
        self.acked: set[str] = set()
        self.runs: list[PipedAgent] = []
        self._start()

    def _start(self) -> None:
        self.runs.append(PipedAgent(self.env, "--lines", "-s", f"{self.name}{len(self.runs)}"))
        self.say_missing()

    @property
    def now(self) -> PipedAgent:
        return self.runs[-1]

    def say_missing(self) -> None:
        self.now.say(*(text for text in self.facts if text not in self.acked))

    def seen(self) -> set[str]:
        return self.acked | self.now.acks(CHAT_ACK, self.now.err)

    def pending(self) -> bool:
        return not set(self.facts) <= self.seen()

    def kill(self) -> None:
        self.now.kill()
        self.acked = self.seen()
        self._start()

    def wait_all_acknowledged(self) -> None:
        """Until the running chat has acknowledged every fact; a write refused by a held ledger is said again."""
        refused = 0

        def settled() -> bool:
            return not self.pending() or self.failures() > refused

        while self.pending():
            self.now.wait_until(settled)
            assert not self.now.ended, "\n".join(self.now.err[-20:])
            if self.failures() > refused:
                refused = self.failures()
                self.acked = self.seen()
                self.say_missing()

    def failures(self) -> int:
        return sum("could not save turn" in line for line in self.now.err)

    def lines(self) -> list[str]:
        return [line for run in self.runs for line in run.err]


class AddLoop(threading.Thread):
    """``agent memories add`` for each of its 50 facts in turn, as a shell loop would; an add that was killed or
    refused is run again until its fact is acknowledged."""

    def __init__(self, env: Mapping[str, str], name: str) -> None:
        super().__init__(daemon=True)
        self.env, self.name = env, name
        self.facts = [fact(name, n) for n in range(FACTS)]
        self.acked: set[str] = set()
        self.errors: list[str] = []  # whatever an add printed on stderr, when it failed without being killed
        self.done = threading.Event()
        self.stop = threading.Event()  # set by the test when it ends early: no add is started after it
        self._lock = threading.Lock()
        self._current: PipedAgent | None = None

    def run(self) -> None:
        try:
            for text in self.facts:
                while text not in self.acked and not self.stop.is_set():
                    with self._lock:
                        add = self._current = PipedAgent(self.env, "memories", "add", text)
                    code = add.finish()
                    with self._lock:
                        self._current = None
                        self.acked |= add.acks(ADD_ACK, add.out)
                    if code == -signal.SIGKILL or text in self.acked:
                        continue
                    self.errors.append(f"exit {code}: " + "\n".join(add.err))
                    if not (code == 1 and len(add.err) == 1 and LOCKED.search(add.err[0])):
                        return  # anything but the one line of a ledger held too long fails the test
        except BaseException as exc:  # handed over to the test's thread
            self.errors.append(repr(exc))
        finally:
            self.done.set()

    def pending(self) -> bool:
        return not self.done.is_set()

    def kill(self) -> None:
        """SIGKILL the add running now, if one is (one that has ended is not signalled: its pid is reaped)."""
        with self._lock:
            if self._current is not None:
                self._current.send(signal.SIGKILL)


def listed_all(out: list[str]) -> set[str]:
    """The facts in the table the chat's ``/memories --all`` printed (the one titled with a count of memories)."""
    at = next(i for i, line in enumerate(out) if re.fullmatch(r"\d+ memories", line.strip()))
    end = next((i for i, line in enumerate(out) if i > at and line.strip().startswith("matches for ")), len(out))
    return {m.group(0) for line in out[at:end] if (m := re.search(r"My friend \S+ lives in the town of \S+", line))}


def found_by_own_search(out: list[str], text: str) -> bool:
    """Whether the chat's ``/memories TEXT`` listed ``text`` first: its output is a table titled with the query."""
    try:
        at = out.index(next(line for line in out if line.strip() == f"matches for {text}"))
    except StopIteration:
        return False
    rows = [line for line in out[at + 1 :] if "friend" in line]
    return bool(rows) and text in rows[0]


@pytest.mark.slow
def test_three_chats_and_two_add_loops_killed_at_random_lose_nothing_and_find_each_other(
    fake: FakeOpenAI, warm_agent: WarmAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, rng = env_for(fake), random.Random(11)
    warm = warm_agent
    chats = {name: Chat(env, name) for name in CHATS}
    loops = {name: AddLoop(env, name) for name in LOOPS}
    writers: dict[str, Chat | AddLoop] = {**chats, **loops}
    try:
        for loop in loops.values():
            loop.start()
        for _ in range(ROUNDS):  # each round kills one writer, still at work if any is, at a moment of its own
            busy = [name for name, writer in writers.items() if writer.pending()]
            time.sleep(rng.uniform(0.0, 0.5))  # only picks the moment: nothing below depends on what it reached
            writers[rng.choice(busy or list(chats))].kill()
        for chat in chats.values():
            chat.wait_all_acknowledged()
        for loop in loops.values():
            assert loop.done.wait(WAIT), f"{loop.name} did not finish"
            assert all(LOCKED.search(error) for error in loop.errors), "\n".join(loop.errors)
            assert loop.acked == set(loop.facts), f"{loop.name} left facts unacknowledged: {loop.errors}"
        for chat in chats.values():
            chat.acked = chat.seen()
            assert chat.acked == set(chat.facts)
        everything = {text for writer in writers.values() for text in writer.acked}
        assert len(everything) == FACTS * len(writers)

        # Beside the open chats, a process of its own lists them all, never refused.
        listed = warm.run(env, "memories", "list", "--json")
        assert listed.returncode == 0 and REFUSED not in listed.stderr, listed.stderr
        assert sorted(m["text"] for m in json.loads(listed.stdout)) == sorted(everything)
        # Each chat, still running, recalls a fact of each other writer at its next turn, lists every memory and
        # finds each by a search of its own words.
        asked = {name: [fact(other, FACTS - 1) for other in writers if other != name] for name in chats}
        for name, chat in chats.items():
            chat.now.say(*map(question, asked[name]), "/memories --all",
                         *(f"/memories {text}" for text in sorted(everything)))
        codes = {name: chat.now.finish() for name, chat in chats.items()}
    finally:
        for loop in loops.values():
            loop.stop.set()
            loop.kill()
            loop.join(WAIT)
        for chat in chats.values():
            chat.now.kill()

    assert codes == dict.fromkeys(chats, 0)
    for chat in chats.values():
        assert not [line for line in chat.lines() if REFUSED in line or "Chatting without it" in line], chat.lines()
        assert all(LOCKED.search(line) for line in chat.lines() if "could not save turn" in line)
        out = chat.now.out
        assert listed_all(out) == everything, f"{chat.name}'s /memories --all lists every one"
        missed = [text for text in sorted(everything) if not found_by_own_search(out, text)]
        assert missed == [], f"{chat.name}'s search of their own words did not find them first"
    for name, texts in asked.items():
        for text in texts:
            assert text in prompt_for(fake, question(text)), f"{name} did not recall {text!r} at its next turn"
    for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_EMBEDDER"):
        monkeypatch.setenv(key, env[key])
    memory = wiring.open_memory(load_settings())  # this process holds the index now, caught up from the ledger
    assert {record.text for record in memory.list()} == everything
    for text in everything:
        assert memory.search(text, k=1)[0].record.text == text
    forget_clients()


SECRET = "My locker number is Vq37zexa at the Brumwell gym"
# The memory's words as the store kept them; the chats' own questions name two of them, and stay theirs.
NEEDLES = (SECRET.lower().encode(),)


def leaks(root: Path, *needles: bytes) -> list[str]:
    """Every file under ``root`` whose bytes hold a needle, whatever its case, read while chats may still write.

    A file that is gone by the time it is read was a chat's temporary copy, renamed into place or dropped: what it
    held is in the file it became, read here after the rename or at the check that follows the chats' end."""
    found = []
    for path in root.rglob("*"):
        try:
            held = path.is_file() and not path.is_symlink() and any(n in path.read_bytes().lower() for n in needles)
        except FileNotFoundError:
            continue
        if held:
            found.append(str(path))
    return found


def replies(chat: PipedAgent, count: int) -> None:
    """Until the chat has answered ``count`` turns in all (the fake answers every turn "Noted.")."""
    chat.wait_until(lambda: chat.out.count("Noted.") >= count)
    assert chat.out.count("Noted.") >= count, "\n".join(chat.err[-20:])


@pytest.mark.slow
def test_forget_in_another_process_takes_effect_in_the_chats_at_their_next_turn_and_leaves_no_byte(
    fake: FakeOpenAI, warm_agent: WarmAgent, tmp_path: Path
) -> None:
    env, warm = env_for(fake), warm_agent
    asking = [f"{opening} Vq37zexa at Brumwell?" for opening in ("What is", "What about", "Any news of", "And")]
    added = warm.run(env, "memories", "add", SECRET)
    assert added.returncode == 0, added.stderr
    holder = PipedAgent(env, "--lines", "-s", "holder")
    reader = None
    try:
        holder.say(SECRET, asking[0])  # each chat's own session holds the words as the user typed them
        replies(holder, 2)  # the first chat has opened memory: it holds the index
        reader = PipedAgent(env, "--lines", "-s", "reader")
        reader.say(SECRET, asking[1])
        replies(reader, 2)
        [record] = json.loads(warm.run(env, "memories", "list", "--json").stdout)
        forgot = warm.run(env, "memories", "forget", record["id"], "--yes")
        assert forgot.returncode == 0, forgot.stderr
        holder.say(asking[2])
        reader.say(asking[3])
        replies(holder, 3)
        replies(reader, 3)
        assert leaks(tmp_path / "data" / "sessions", *NEEDLES) == [], "each chat removed the words from its session"
        assert holder.finish() == 0 and reader.finish() == 0
    finally:
        holder.kill()
        if reader is not None:
            reader.kill()
    assert SECRET in prompt_for(fake, asking[0]), "the holder recalled it before the forget"
    assert SECRET in prompt_for(fake, asking[1]), "so did the chat beside it"
    assert SECRET not in prompt_for(fake, asking[2]), "the holder recalls it no more"
    assert SECRET not in prompt_for(fake, asking[3]), "nor does the other chat"
    for chat in (holder, reader):
        assert not [line for line in chat.err if REFUSED in line], chat.err
    # The chats' turns finished the forget (the later of them found both sessions scrubbed), or, if the ledger's log
    # could not be emptied then, this start does.
    finished = warm.run(env, "memories", "list")
    assert finished.returncode == 0, finished.stderr
    root = tmp_path / "data"
    ledger = SqliteLedger(root / "ledger.sqlite3")
    try:
        assert ledger.pending_forgets() == [], "the forget's record is gone"
    finally:
        ledger.close()
    vector = array("f", hashed_embedding(SECRET)).tobytes()[:32]
    assert leaks(root, *NEEDLES) == [], "no byte of the text"
    assert leaks(root / "chroma", vector) == [], "nor of the vector: the holder dropped it from Chroma's files"


@pytest.mark.slow
def test_a_write_that_finds_the_ledger_held_waits_its_2_s_says_so_in_one_line_and_loses_nothing(
    fake: FakeOpenAI, warm_agent: WarmAgent, tmp_path: Path
) -> None:
    """Another program holds the ledger's write lock (a ``sqlite3`` shell left in ``BEGIN``): readers go on at once
    (WAL), and a writer gives up after its configured wait, not SQLite's or Python's default, with one line that says
    nothing was written; the chat goes on, keeps the words in its session and the turn on this machine, and
    remembers it at its first turn after the ledger answers again."""
    env, path = env_for(fake), tmp_path / "data" / "ledger.sqlite3"
    assert warm_agent.run(env, "memories", "add", fact("kept", 0)).returncode == 0
    probe = SqliteLedger(path)
    assert probe._db.execute("PRAGMA busy_timeout").fetchone()[0] == 2000, "the wait is ours: 2 s"
    probe.close()
    line = (f"agent: The memory ledger {path} stayed locked by another process for over 2 s, so nothing was written: "
            f"try again (if it lasts, end that process: see `fuser {path}`).")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    chat = PipedAgent(env, "--lines", "-s", "held")
    try:
        listed = warm_agent.run(env, "memories", "list", "--json")
        refused = warm_agent.run(env, "memories", "add", fact("late", 0))
        chat.say(SAID, "And the weather?")
        replies(chat, 2)
        chat.wait_until(lambda: any("is not remembered yet" in line for line in chat.err))
    finally:
        holder.rollback()
        holder.close()
    chat.say("And tomorrow?")  # the ledger answers again: the turn kept on this machine meanwhile is written now
    chat.wait_until(lambda: any("kept while memory was away" in line for line in chat.err))
    assert chat.finish() == 0
    assert listed.returncode == 0, listed.stderr
    assert [m["text"] for m in json.loads(listed.stdout)] == [fact("kept", 0)], "a reader never waits for a writer"
    assert (refused.returncode, refused.stdout, refused.stderr.splitlines()) == (1, "", [line])
    assert [line for line in chat.err if "not remembered yet" in line] == [
        f"memory: turn 1 is not remembered yet ({line.removeprefix('agent: ')}); it is kept on this machine and "
        "remembered when memory answers again"]
    assert leaks(tmp_path / "data" / "sessions", SAID.lower().encode()), "the words stay in the session"
    again = warm_agent.run(env, "memories", "add", fact("late", 0))
    assert again.returncode == 0, again.stderr
    stored = json.loads(warm_agent.run(env, "memories", "list", "--json").stdout)
    assert sorted(m["text"] for m in stored) == sorted([fact("kept", 0), fact("late", 0), SAID])


@pytest.mark.slow
def test_rebuild_and_reindex_beside_the_chat_holding_the_index_name_it_and_change_nothing(
    fake: FakeOpenAI, warm_agent: WarmAgent, tmp_path: Path
) -> None:
    """The index is the holder's (its HNSW graph lives in that process): a command that would rewrite it under the
    chat stops at once with one line naming the holder and what to do, and leaves the ledger's vectors as they
    were; once the chat is closed it runs."""
    env, data = env_for(fake), tmp_path / "data"
    assert warm_agent.run(env, "memories", "add", fact("kept", 0)).returncode == 0
    copies = SqliteLedger(data / "ledger.sqlite3")
    before = copies.stored_vectors("default", copies.ids("default"))
    chat = PipedAgent(env, "--lines", "-s", "holding")
    try:
        chat.say(question(fact("kept", 0)))
        replies(chat, 1)  # its memory is open: it holds the index (no other agent runs)
        assert locking.holder(data / "chroma") == str(chat.pid)
        line = (f"agent: Another agent process (pid {chat.pid}) holds the memory index in {data}, which this command "
                f"rebuilds: close it (if it hangs: kill {chat.pid}), then run the command again.")
        refusals = [warm_agent.run(env, "memories", *args) for args in (("rebuild",), ("reindex", "--embedder",
                                                                                       "openai"))]
        chat.say(question(fact("kept", 0)) + "?")
        replies(chat, 2)
        assert chat.finish() == 0
    finally:
        chat.kill()
    for refused in refusals:
        assert (refused.returncode, refused.stdout, refused.stderr.splitlines()) == (1, "", [line])
    assert copies.stored_vectors("default", copies.ids("default")) == before, "the ledger's vectors are as they were"
    copies.close()
    assert fact("kept", 0) in prompt_for(fake, question(fact("kept", 0)) + "?"), "the chat recalls as before"
    rebuilt = warm_agent.run(env, "memories", "rebuild")
    assert (rebuilt.returncode, rebuilt.stdout) == (0, "rebuilt the index: 1 memory\n"), rebuilt.stderr
