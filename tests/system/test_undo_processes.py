"""``/undo`` and forget as a user runs them, through real ``agent`` processes (forked from the warm helper): a turn
said while the shared PostgreSQL server is down waits in the spool, ``/undo`` takes it out, and once the server is
back nothing of it is remembered; ``agent -c`` then ``/undo`` in a new process puts back what the undone turn
replaced, and the next request carries it; ``agent memories forget`` of the memory that replaced another says which
one is current again. Every wait is for a line printed, with a timeout only a hang reaches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e_helpers import agent, agent_env, env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.machines import listed
from tests.pg_server import Cluster
from tests.piped_chat import PipedChat

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("model_cache")]

SHELLFISH = "I'm allergic to shellfish"
NOT_SHELLFISH = "I'm not allergic to shellfish anymore"
BACK = "(memory answers again: what this chat kept on this machine is remembered now)"


def test_undo_of_a_turn_said_while_the_database_was_down_takes_it_out_of_the_spool_for_good(
    tmp_path: Path, own_cluster: Cluster
) -> None:
    database = own_cluster.new_database()
    own_cluster.stop()
    spool = tmp_path / "data" / "spool"
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = {**env_for(fake), "AGENT_DATA_DIR": str(tmp_path / "data"), "AGENT_DATABASE_URL": database,
               "AGENT_CHROMA_URL": ""}
        chat = PipedChat(env, "away")
        try:
            chat.say("I have a peanut allergy", "I moved to Berlin last month")
            chat.wait_replies(2)
            chat.say("/undo")  # it waits for the turn's write, which the spool took
            chat.wait_until(lambda: any(line.startswith("Undid turn 2") for line in chat.err))
            own_cluster.start()
            chat.wait_until(lambda: BACK in chat.err)
            chat.say("Where do I live?")
            chat.wait_replies(3)
        finally:
            code = chat.close()
        assert code == 0, "\n".join(chat.err)
        assert ("Undid turn 2 (you: I moved to Berlin last month); it had not reached memory (the store did not "
                "answer), and it no longer waits to be remembered.") in chat.err
        assert listed(env) == ["I have a peanut allergy"], "the undone turn never reached the database"
        assert any(line.endswith("remembered: I have a peanut allergy") for line in chat.err)
        assert not any(spool.glob("*.json"))
        assert "Berlin" not in fake.system_prompts()[-1]


def test_undo_in_a_new_process_after_agent_c_puts_the_allergy_back(tmp_path: Path) -> None:
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = agent_env(fake)
        first = agent(env, "--lines", "-s", "food", stdin=f"{SHELLFISH}\n{NOT_SHELLFISH}\n")
        assert first.returncode == 0, first.stderr
        again = agent(env, "--lines", "-c", stdin="/undo\n/memories\nGive me a seafood paella recipe\n")
        assert again.returncode == 0, again.stderr
        assert f"Undid turn 2 (you: {NOT_SHELLFISH}); forgot the memory it wrote: {NOT_SHELLFISH}." in again.stderr
        assert f"Current again, now that the memory that replaced it is gone: {SHELLFISH}" in again.stderr
        assert "No memories yet" not in again.stderr and SHELLFISH in again.stdout
        assert "allergies: shellfish" in fake.system_prompts()[-1]
        rows = json.loads(agent(env, "memories", "list", "--json", "--history").stdout)
        assert [(r["text"], r["superseded_by"]) for r in rows] == [(SHELLFISH, None)]


def test_agent_memories_forget_of_the_newer_memory_says_the_older_one_is_current_again(tmp_path: Path) -> None:
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = agent_env(fake)
        assert agent(env, "memories", "add", SHELLFISH).returncode == 0
        assert agent(env, "memories", "add", NOT_SHELLFISH).returncode == 0
        rows = {r["text"]: r for r in json.loads(agent(env, "memories", "list", "--json", "--history").stdout)}
        assert rows[SHELLFISH]["superseded_by"] == rows[NOT_SHELLFISH]["id"]
        forgot = agent(env, "memories", "forget", rows[NOT_SHELLFISH]["id"])
        assert forgot.returncode == 0, forgot.stderr
        assert f"Current again, now that the memory that replaced it is gone: {SHELLFISH}\n" in forgot.stdout
        profile = json.loads(agent(env, "memories", "profile", "--json").stdout)
        assert [(p["key"], p["value"], p["superseded_by"]) for p in profile] == [("allergy", "shellfish", None)]
        chat = agent(env, "--lines", "-s", "dinner", stdin="Give me a seafood paella recipe\n")
        assert chat.returncode == 0 and "allergies: shellfish" in fake.system_prompts()[-1]
