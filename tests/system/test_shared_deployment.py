"""The shared deployment of issue 11 §2: several machines and users on one PostgreSQL ledger and one Chroma server.

Real servers on 127.0.0.1 throughout: a PostgreSQL cluster from ``tests.pg_server`` (a fresh database per test) and
``chroma run`` (``tests.helpers_store.chroma_server``; each database's collections carry its own store id, so the
tests of a module share one server without seeing each other's vectors). A "machine" is a data directory and a
HOME of its own. Chats are real ``agent`` processes against the fake OpenAI server, whose embeddings they use too
(a process then starts without loading the local model), and what a chat recalled is read in the system prompt
the fake received. Every wait is for a state (a line printed, a row written) with a timeout only a hang reaches.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import wiring
from agent.adapters.chroma_index import ChromaIndex, open_client
from agent.adapters.postgres_ledger import PostgresLedger
from agent.config import load_settings
from tests.e2e_helpers import fact, prompt_for, question
from tests.fake_openai import FakeOpenAI, Reply
from tests.machines import SISTER, Machine, agent, listed, machines
from tests.pg_server import Cluster
from tests.piped_chat import PipedChat, run

# One worker of a parallel run starts the module's Chroma server, not each (pyproject.toml: loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("shared_deployment")]

ASK_SISTER = "Tell me about Ada and the cello"
FACTS = 25


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


@pytest.fixture
def pair(tmp_path: Path, pg_url: str, chroma_url: str) -> tuple[Machine, Machine]:
    """Two machines on a fresh database of the shared cluster and the module's Chroma server."""
    return machines(tmp_path, pg_url, chroma_url)


def indexed(database_url: str, chroma_url: str, user: str = "default") -> set[str]:
    """The ids in ``user``'s collection on the Chroma server, as the agent names it for this database."""
    ledger = PostgresLedger(database_url)
    try:
        namespace = ledger.store_id()
    finally:
        ledger.close()
    return ChromaIndex(open_client(None, chroma_url), user, chroma_url, namespace=namespace, remote=True).ids()


def rows(database_url: str, table: str) -> int:
    ledger = PostgresLedger(database_url)
    try:
        return int(ledger._read(f"SELECT count(*) AS n FROM {table}")[0]["n"])
    finally:
        ledger.close()


def chatting(env: dict[str, str], name: str) -> PipedChat:
    return PipedChat(env, name)


def memory_lines(chat: PipedChat) -> list[str]:
    """What the chat said about memory other than its receipts: a failure, a turn kept for later."""
    return [line for line in chat.err if line.startswith("memory:") or "Long-term memory" in line]


def test_two_machines_writing_at_once_lose_nothing_and_find_each_others_memories(
    pair: tuple[Machine, Machine], fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    chats = {name: chatting(machine.env(fake), name) for name, machine in zip(("lap", "desk"), pair, strict=True)}
    try:
        for name, chat in chats.items():
            chat.say(*(fact(name, n) for n in range(FACTS)))
        for chat in chats.values():  # a chat reading a script answers the next line while the last write runs
            chat.wait_until(lambda chat=chat: len(chat.remembered()) + len(memory_lines(chat)) >= FACTS)
        assert [memory_lines(chat) for chat in chats.values()] == [[], []]
        acknowledged = {name: chat.remembered() for name, chat in chats.items()}
        for name, texts in acknowledged.items():
            assert sorted(texts) == sorted(fact(name, n) for n in range(FACTS)), f"{name} lost acknowledgements"
        # Each chat, still running, is asked about the other machine's first and last facts.
        asked = {name: [fact(other, n) for other in chats if other != name for n in (0, FACTS - 1)] for name in chats}
        for name, chat in chats.items():
            chat.say(*map(question, asked[name]))
        for chat in chats.values():
            chat.wait_replies(FACTS + 2)
    finally:
        codes = {name: chat.close() for name, chat in chats.items()}
    assert codes == dict.fromkeys(chats, 0)
    for texts in asked.values():
        for text in texts:
            assert text in prompt_for(fake, question(text)), f"{text!r} was not recalled on the other machine"
    everything = sorted(fact(name, n) for name in chats for n in range(FACTS))
    for machine in pair:
        for key, value in machine.env(fake).items():
            if key.startswith(("AGENT_", "OPENAI_")) or key == "HOME":
                monkeypatch.setenv(key, value)
        memory = wiring.open_memory(load_settings())
        try:
            assert sorted(r.text for r in memory.list()) == everything, "each machine lists every memory of both"
            assert memory.indexed() == len(everything), "every vector is on the Chroma server"
            for text in everything:
                assert memory.search(text, k=1)[0].record.text == text, "found by a search of its own words"
        finally:
            memory.close()


def test_what_one_machine_remembers_the_other_recalls_at_its_next_turn(
    pair: tuple[Machine, Machine], fake: FakeOpenAI
) -> None:
    laptop, desktop = pair
    desk = chatting(desktop.env(fake), "desk")
    try:
        desk.say("hello there")
        desk.wait_replies(1)
        assert SISTER not in fake.system_prompts()[-1]
        lap = chatting(laptop.env(fake), "lap")
        try:
            lap.say(SISTER)
            lap.wait_until(lambda: SISTER in lap.remembered())
        finally:
            assert lap.close() == 0
        desk.say(ASK_SISTER)  # the same chat, not restarted
        desk.wait_replies(2)
        assert SISTER in fake.system_prompts()[-1], "the desktop's next turn recalls what the laptop remembered"
    finally:
        assert desk.close() == 0
    assert "Traceback" not in "\n".join(desk.err + lap.err)


def test_forget_on_one_machine_is_gone_for_both(
    pair: tuple[Machine, Machine], fake: FakeOpenAI, pg_cluster: Cluster
) -> None:
    laptop, desktop = pair
    added = agent(laptop.env(fake), "memories", "add", SISTER)
    assert added.returncode == 0, added.stderr
    memory = added.stdout.split()[1].rstrip(":")
    desk = chatting(desktop.env(fake), "desk")
    try:
        desk.say(ASK_SISTER)
        desk.wait_replies(1)
        assert SISTER in fake.system_prompts()[-1]
        gone = agent(laptop.env(fake), "memories", "forget", memory)
        assert gone.returncode == 0, gone.stderr
        desk.say(ASK_SISTER)
        desk.wait_replies(2)
        assert "Ada lives in Porto" not in fake.system_prompts()[-1], "the desktop's next turn no longer recalls it"
    finally:
        assert desk.close() == 0
    for machine in pair:
        assert listed(machine.env(fake)) == []
    assert rows(laptop.database_url, "memories") == rows(laptop.database_url, "vectors") == 0
    assert indexed(laptop.database_url, laptop.chroma_url) == set(), "its vector left the Chroma server"
    pg_cluster.sql("CHECKPOINT")
    ledger = PostgresLedger(laptop.database_url)
    try:
        oid = ledger._read("SELECT oid FROM pg_database WHERE datname = current_database()")[0]["oid"]
    finally:
        ledger.close()
    files = (pg_cluster.data / "base" / str(oid)).iterdir()
    held = [p.name for p in files if p.is_file() and b"Ada lives in Porto" in p.read_bytes()]
    assert held == [], "no table or index file of the database keeps the text (VACUUM FULL after the delete)"


def test_a_user_sees_none_of_another_users_memories_through_any_command(
    pair: tuple[Machine, Machine], fake: FakeOpenAI
) -> None:
    laptop, desktop = pair
    alice = laptop.env(fake, AGENT_USER="alice")
    for text in (SISTER, "I live in Lisbon", "My locker is number 4417"):
        assert agent(alice, "memories", "add", text).returncode == 0
    bob_here, bob_there = laptop.env(fake, AGENT_USER="bob"), desktop.env(fake, AGENT_USER="bob")
    assert agent(bob_there, "memories", "add", "I play chess on Sundays").returncode == 0
    mine = listed(alice, "alice")
    theirs = [SISTER, "I live in Lisbon", "My locker is number 4417"]
    assert sorted(theirs) == mine
    alice_ids = [json.loads(line)["id"] for line in agent(alice, "memories", "export").stdout.splitlines()]
    for bob in (bob_here, bob_there):
        listing = agent(bob, "memories", "list")
        assert listing.returncode == 0 and "chess" in listing.stdout
        assert not any(word in listing.stdout for word in ("Ada", "Lisbon", "4417"))
        found = agent(bob, "memories", "search", "Ada Lisbon locker", "--all", "--json")
        assert found.returncode == 0 and [m["text"] for m in json.loads(found.stdout)] == ["I play chess on Sundays"]
        profile = agent(bob, "memories", "profile")
        assert profile.returncode == 0 and "Lisbon" not in profile.stdout
        stats = agent(bob, "memories", "stats")
        assert stats.returncode == 0 and "Lisbon" not in stats.stdout
        assert "ledger           PostgreSQL postgresql://" in stats.stdout, "where the memory lives is said"
        assert "index            Chroma server http://127.0.0.1:" in stats.stdout
        refused = agent(bob, "memories", "forget", *alice_ids)
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        chat = agent(bob, "--lines", "-s", "bob", stdin="What do you know about me? Where do I live?\n")
        assert chat.returncode == 0 and chat.stdout.strip() == "Noted.", chat.stderr
        prompt = fake.system_prompts()[-1]
        assert "chess" in prompt and not any(word in prompt for word in ("Ada", "Lisbon", "4417"))
    assert listed(alice, "alice") == mine, "bob's forget of alice's ids forgot nothing of hers"
    assert listed(alice, "bob") == ["I play chess on Sundays"]


def test_the_database_going_away_mid_chat_is_one_line_and_its_return_heals(
    tmp_path: Path, own_cluster: Cluster, chroma_url: str, fake: FakeOpenAI
) -> None:
    laptop, _ = machines(tmp_path, own_cluster.new_database(), chroma_url)
    chat = chatting(laptop.env(fake), "lap")
    try:
        chat.say(SISTER)
        chat.wait_until(lambda: SISTER in chat.remembered())
        own_cluster.stop("immediate")  # a crash of the server
        chat.say("My dog is called Rex and he is four")
        chat.wait_until(lambda: any("turn 2 is not remembered yet" in line for line in chat.err))
        chat.say("hello again")
        chat.wait_replies(3)
        down = list(chat.err)
        own_cluster.start()
        chat.say(ASK_SISTER)
        chat.wait_until(lambda: any("kept while memory was away) remembered: My dog is called Rex" in line
                                    for line in chat.err))
        chat.say("Tell me about Rex the dog")
        chat.wait_replies(5)
    finally:
        code = chat.close()
    assert code == 0
    assert chat.out.count("Noted.") == 5, "every turn was answered, the database away or not"
    assert "Traceback" not in "\n".join(chat.err)
    said = [line for line in down if "memory" in line.lower() and "remembered: My sister" not in line]
    assert len([line for line in said if "recall failed" in line]) == 1, said
    assert not any(line.startswith("remembered: My dog") for line in down), "never said remembered while it was not"
    prompts = fake.system_prompts()
    assert SISTER in prompts[3], "the first turn after the return remembers again"
    assert "My dog is called Rex" in prompts[4], "the turn kept while the database was away is remembered"
    assert listed(laptop.env(fake)) == sorted([SISTER, "My dog is called Rex and he is four"])
    assert not any((laptop.root / "data" / "spool").glob("*.json")), "nothing is left waiting"


def test_the_database_alone_shares_memory_through_each_machines_own_index(
    tmp_path: Path, pg_url: str, fake: FakeOpenAI
) -> None:
    """Without a Chroma server each machine keeps its own embedded index, caught up from the database's copies of
    the vectors before each search: what one remembers or forgets, the other's next turn sees. The commands run in
    processes of their own here: each holds its machine's embedded index while it runs."""
    laptop, desktop = machines(tmp_path, pg_url, "")
    alone = {"AGENT_CHROMA_URL": ""}
    desk = chatting(desktop.env(fake, **alone), "desk")
    try:
        desk.say("hello there")
        desk.wait_replies(1)
        added = run(laptop.env(fake, **alone), "memories", "add", SISTER)
        assert added.returncode == 0, added.stderr
        desk.say(ASK_SISTER)
        desk.wait_replies(2)
        assert SISTER in fake.system_prompts()[-1], "the desktop's own index caught up with the database"
        gone = run(laptop.env(fake, **alone), "memories", "forget", added.stdout.split()[1].rstrip(":"))
        assert gone.returncode == 0, gone.stderr
        desk.say(ASK_SISTER)
        desk.wait_replies(3)
        assert "Ada lives in Porto" not in fake.system_prompts()[-1]
    finally:
        assert desk.close() == 0
    assert not (laptop.root / "data" / "ledger.sqlite3").exists(), "the data directory's ledger is not used"
