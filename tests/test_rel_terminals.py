"""Every terminal remembers (issue 11 §1): any number of ``agent`` processes on one data directory read and write
memory at once, lose nothing, and never wait for each other's lock.

Real processes throughout, as the behaviour is about processes: piped ``agent`` chats against the fake OpenAI server
(its embeddings too, so a process starts without loading the local model), ``agent memories ...`` commands beside
them, and the store's writer children (``tests.helpers_store``, which open memory through ``open_memory`` as the
agent does) for the kill rounds. No refusal ("is using the memory
store") may appear anywhere, and every wait is a generous timeout that only a hang trips, never a claim about speed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters.chroma_index import forget_clients
from agent.config import load_settings
from tests.fake_openai import FakeOpenAI, Reply, hashed_embedding
from tests.helpers_store import open_fake_memory, spawn, wait_for_line

FACTS = 50
# Each fact of an add loop is a process of its own: at 50 the test took 9 minutes on this project's 2-core VM under
# the load of eight engineers (load average 13-15), so the loops add 20 each, the chats 50.
LOOP_FACTS = 20
REFUSED = "is using the memory store"
WAIT = 600.0  # only a hang gets near it


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def env_for(fake: FakeOpenAI) -> dict[str, str]:
    """The fake's bag-of-words embeddings rate a question of two words under the default threshold: every match
    counts here, and the memory asked after is the top hit by its unique words."""
    return {**os.environ, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "AGENT_EMBEDDER": "openai",
            "AGENT_MEMORY_THRESHOLD": "0"}


def fact(writer: str, n: int) -> str:
    """A disclosure whose words belong to (writer, n) alone, so a search of its own words finds exactly it."""
    return f"My friend {writer}f{n}k lives in the town of {writer}t{n}q"


def question(text: str) -> str:
    """A turn the gate does not keep, asking after the two words that are ``text``'s alone."""
    own = [word for word in text.split() if any(c.isdigit() for c in word)]
    return f"Tell me about {' and '.join(own)}"


class PipedChat:
    """``agent -s NAME`` with its stdin kept open: lines go in one at a time, its output is read as it comes."""

    def __init__(self, env: dict[str, str], name: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "agent", "-s", name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.out: list[str] = []
        self.err: list[str] = []
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def say(self, *lines: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(f"{line}\n" for line in lines))
        self.proc.stdin.flush()

    def wait_until(self, done: Callable[[], bool]) -> None:
        """Until ``done()`` holds for what the chat printed, or it exits."""
        with self._changed:
            self._changed.wait_for(lambda: done() or self.proc.poll() is not None, WAIT)
        assert done(), "\n".join(self.err[-20:])

    def wait_replies(self, count: int) -> None:
        """Until the chat has answered ``count`` turns in all (the fake answers every turn "Noted.")."""
        self.wait_until(lambda: self.out.count("Noted.") >= count)

    def remembered(self) -> list[str]:
        return [line.removeprefix("remembered: ") for line in self.err if line.startswith("remembered: ")]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(WAIT)

    def kill(self) -> None:
        """SIGKILL, then everything it printed before is read."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(WAIT)


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent", *args], capture_output=True, text=True, env=env,
                          timeout=WAIT)


def add_loop(env: dict[str, str], writer: str, acknowledged: list[str], errors: list[str]) -> None:
    """``agent memories add`` LOOP_FACTS times in a row, as a shell loop would: an exit 0 is an acknowledgement."""
    for n in range(LOOP_FACTS):
        result = run(env, "memories", "add", fact(writer, n))
        if result.returncode == 0:
            acknowledged.append(fact(writer, n))
        else:
            errors.append(result.stderr)


def prompt_for(fake: FakeOpenAI, line: str) -> str:
    """The system prompt of the chat request whose user turn was ``line``."""
    for request in fake.chat_requests:
        users = [m["content"] for m in request.body["messages"] if m["role"] == "user"]
        if users and users[-1] == line:
            return "\n".join(m["content"] for m in request.body["messages"] if m["role"] == "system")
    raise AssertionError(f"no chat request for {line!r}")


@pytest.mark.slow
def test_three_chats_and_two_add_loops_at_once_lose_nothing_and_find_each_other(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = env_for(fake)
    chats = {name: PipedChat(env, name) for name in ("chata", "chatb", "chatc")}
    loops: dict[str, list[str]] = {"loopa": [], "loopb": []}
    errors: list[str] = []
    try:
        threads = [threading.Thread(target=add_loop, args=(env, name, acked, errors)) for name, acked in loops.items()]
        for thread in threads:
            thread.start()
        for name, chat in chats.items():
            chat.say(*(fact(name, n) for n in range(FACTS)))
        for chat in chats.values():
            chat.wait_replies(FACTS)
        for thread in threads:
            thread.join(WAIT)
        acknowledged = {name: chat.remembered() for name, chat in chats.items()} | loops
        told = dict.fromkeys(chats, FACTS) | dict.fromkeys(loops, LOOP_FACTS)
        for name, texts in acknowledged.items():
            assert sorted(texts) == sorted(fact(name, n) for n in range(told[name])), f"{name} lost acknowledgements"
        assert errors == []

        # Each chat, still running, is asked about facts the other four processes wrote.
        asked = {name: [fact(other, n) for other in acknowledged if other != name for n in (0, told[other] - 1)]
                 for name in chats}
        for name, chat in chats.items():
            chat.say(*map(question, asked[name]))
        for chat in chats.values():
            chat.wait_replies(FACTS + len(asked["chata"]))
        # Searches from processes of their own beside the open chats, of each writer's facts.
        searches = {fact(writer, n): run(env, "memories", "search", fact(writer, n), "--k", "1", "--json")
                    for writer in acknowledged for n in (1, told[writer] // 2)}
        codes = {name: chat.close() for name, chat in chats.items()}
    finally:
        for chat in chats.values():
            chat.kill()

    assert codes == dict.fromkeys(chats, 0)
    for chat in chats.values():
        assert not [line for line in chat.err if REFUSED in line or "Chatting without it" in line], chat.err
    for name, texts in asked.items():
        for text in texts:
            assert text in prompt_for(fake, question(text)), f"{name} did not recall {text!r} at its next turn"
    for text, result in searches.items():
        assert result.returncode == 0 and REFUSED not in result.stderr, result.stderr
        assert [hit["text"] for hit in json.loads(result.stdout)] == [text]
    listed = run(env, "memories", "list", "--json")
    assert sorted(m["text"] for m in json.loads(listed.stdout)) == sorted(
        text for texts in acknowledged.values() for text in texts)
    for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_EMBEDDER"):
        monkeypatch.setenv(key, env[key])
    memory = wiring.open_memory(load_settings())  # this process holds the index now, caught up from the ledger
    for text in (text for texts in acknowledged.values() for text in texts):
        assert memory.search(text, k=1)[0].record.text == text
    forget_clients()


ROUNDS = 20


def acked(path: Path) -> dict[str, str]:
    """id -> text of every memory a writer acknowledged (an id line is written and fsynced after ``add`` returns)."""
    if not path.exists():
        return {}
    acks = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            mid, tag, n = parts
            acks[mid] = f"I keep note {tag}q{n}x about the {tag}w{n}z"
    return acks


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    rng = random.Random(11)
    ack = tmp_path / "acks"
    for round_ in range(ROUNDS):
        writers = [spawn("writer", str(ack), f"r{round_}w{i}") for i in range(3)]
        try:
            for writer in writers:
                wait_for_line(writer, "ready", timeout=WAIT)
            order = writers[:]
            rng.shuffle(order)
            for writer in order:  # each killed at a moment of its own, the others still writing
                time.sleep(rng.uniform(0.05, 0.6))
                writer.send_signal(signal.SIGKILL)
                writer.wait()
        finally:
            for writer in writers:
                writer.kill()
                _, err = writer.communicate()
                assert REFUSED not in err, err
    acknowledged = acked(ack)
    assert len(acknowledged) >= ROUNDS, "the writers acknowledged next to nothing: the test would prove nothing"
    memory = open_fake_memory()
    stored = {record.id for record in memory.list()}
    assert set(acknowledged) - stored == set(), "acknowledged memories are missing from the ledger"
    for mid, text in acknowledged.items():
        assert memory.search(text, k=1)[0].record.id == mid
    forget_clients()


CHAT_ROUNDS = 6


@pytest.mark.slow
def test_chats_killed_mid_turn_lose_no_memory_they_said_was_remembered(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two chats per round told facts as fast as they read them, each killed at a moment of its own once it has
    acknowledged at least one: every ``remembered:`` line they printed is a memory after the rounds."""
    env, rng = env_for(fake), random.Random(5)
    acknowledged: list[str] = []
    for round_ in range(CHAT_ROUNDS):
        chats = [PipedChat(env, f"k{round_}c{i}") for i in range(2)]
        try:
            for i, chat in enumerate(chats):
                chat.say(*(fact(f"k{round_}c{i}", n) for n in range(30)))
            for chat in chats:
                chat.wait_until(lambda c=chat: bool(c.remembered()))
                time.sleep(rng.uniform(0.0, 0.8))
                chat.kill()
        finally:
            for chat in chats:
                chat.kill()
        for chat in chats:
            assert not [line for line in chat.err if REFUSED in line], chat.err
            acknowledged += chat.remembered()
    assert len(acknowledged) >= 2 * CHAT_ROUNDS
    for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENT_EMBEDDER"):
        monkeypatch.setenv(key, env[key])
    memory = wiring.open_memory(load_settings())
    assert set(acknowledged) <= {record.text for record in memory.list()}
    for text in acknowledged:
        assert memory.search(text, k=1)[0].record.text == text
    forget_clients()


SECRET = "My locker code is Vq37zexa at the Brumwell gym"
# The memory's words as the store kept them; the chats' own questions name two of them, and stay theirs.
NEEDLES = (SECRET.lower().encode(),)


def leaks(root: Path, *needles: bytes) -> list[str]:
    files = [f for f in root.rglob("*") if f.is_file() and not f.is_symlink()]
    return [str(f) for f in files if any(n in f.read_bytes().lower() for n in needles)]


@pytest.mark.slow
def test_forget_in_another_process_takes_effect_in_the_chats_at_their_next_turn_and_leaves_no_byte(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    env = env_for(fake)
    asking = [f"{opening} Vq37zexa at Brumwell?" for opening in ("What is", "What about", "Any news of", "And")]
    added = run(env, "memories", "add", SECRET)
    assert added.returncode == 0, added.stderr
    holder, reader = PipedChat(env, "holder"), None
    try:
        holder.say(SECRET, asking[0])  # each chat's own session holds the words as the user typed them
        holder.wait_replies(2)  # the first chat has opened memory: it holds the index
        reader = PipedChat(env, "reader")
        reader.say(SECRET, asking[1])
        reader.wait_replies(2)
        [record] = json.loads(run(env, "memories", "list", "--json").stdout)
        forgot = run(env, "memories", "forget", record["id"], "--yes")
        assert forgot.returncode == 0, forgot.stderr
        holder.say(asking[2])
        reader.say(asking[3])
        holder.wait_replies(3)
        reader.wait_replies(3)
        assert leaks(tmp_path / "data" / "sessions", *NEEDLES) == [], "each chat removed the words from its session"
        assert holder.close() == 0 and reader.close() == 0
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
    finished = run(env, "memories", "list")  # a start finishes the forget the open sessions kept waiting
    assert "Finished a forget" in finished.stderr, finished.stderr
    root = tmp_path / "data"
    vector = array("f", hashed_embedding(SECRET)).tobytes()[:32]
    assert leaks(root, *NEEDLES) == [], "no byte of the text"
    assert leaks(root / "chroma", vector) == [], "nor of the vector: the holder dropped it from Chroma's files"
