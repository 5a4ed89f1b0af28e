"""A chat started while the shared PostgreSQL server is down (issue 11 §2), as a real ``agent`` process on a real
server (``tests.pg_server``): memory is away, one line says so, what the gate keeps waits in the spool on this
machine, and once the server is started again the chat opens the store by itself, says that memory answers again,
remembers what was kept, and recalls it at the next turn. Every wait is for a line printed, with a timeout only a
hang reaches; what happened is read in the database and the data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.machines import listed
from tests.pg_server import Cluster
from tests.piped_chat import PipedChat

pytestmark = pytest.mark.slow

ALLERGY = "I have a peanut allergy"
BACK = "(memory answers again: what this chat kept on this machine is remembered now)"
KEPT = "remembered: I have a peanut allergy"


def test_a_chat_started_while_the_database_is_down_keeps_what_it_is_told_and_remembers_it_once_the_server_is_back(
    tmp_path: Path, own_cluster: Cluster
) -> None:
    database = own_cluster.new_database()
    own_cluster.stop()
    machine = tmp_path / "laptop"
    (machine / "home").mkdir(parents=True)
    spool = machine / "data" / "spool"
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = {**env_for(fake), "HOME": str(machine / "home"), "AGENT_DATA_DIR": str(machine / "data"),
               "AGENT_DATABASE_URL": database, "AGENT_CHROMA_URL": ""}
        chat = PipedChat(env, "away")
        try:
            chat.say(ALLERGY, "hello again")
            chat.wait_replies(2)  # a script's turn waits for the last one's write: the allergy is in the spool
            kept = [path.name for path in spool.glob("*.json")]
            own_cluster.start()
            chat.wait_until(lambda: any(line.endswith(KEPT) for line in chat.err))
            chat.say("Do I have any allergy?")
            chat.wait_replies(3)
        finally:
            code = chat.close()
        prompts = fake.system_prompts()
        assert code == 0, "\n".join(chat.err)
        assert len(kept) == 1, "the turn waited on this machine while the database was down"
        assert chat.out.count("Noted.") == 3, "every turn was answered"
        assert "Traceback" not in "\n".join(chat.err)
        # Said once: that memory is away, or (the refused open not known yet on a loaded machine) still opening.
        away = [line for line in chat.err if line.startswith("Long-term memory is away: ")]
        opening = [line for line in chat.err if line.startswith("(Long-term memory has not finished opening")]
        assert len(away) <= 1 and len(opening) <= 1 and away + opening, chat.err
        assert not any("Chatting without it" in line for line in chat.err)
        receipt = next(i for i, line in enumerate(chat.err) if line.endswith(KEPT))
        assert chat.err.index(BACK) < receipt, "memory answers again, then the kept turn is remembered"
        assert not any(line.startswith(KEPT) for line in chat.err[:chat.err.index(BACK)]), "never claimed early"
        assert ALLERGY not in prompts[0] and ALLERGY in prompts[-1], "the turn after the return recalls it"
        assert listed(env) == [ALLERGY], "the allergy is in the database"
        assert not any(spool.glob("*.json")), "nothing is left waiting"
