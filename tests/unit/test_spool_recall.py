"""The turn on which memory answers again recalls what was said while it was away (issue 11 §2): the turns waiting
in the spool are written before that turn's recall, not after it. In-process, with a ledger that can be switched
off (``tests.outage.Outage``)."""

from __future__ import annotations

from pathlib import Path

from agent.spool import Spool, Spooled
from tests.outage import AWAY, Outage, Switching, outage_in, service
from tests.repl_harness import build_chat, run_lines


class Healing(Spool):
    """A spool after whose every entry the store answers again: the outage ends between a turn's failed write and
    the next turn's recall, the moment the worker's queue holds nothing else."""

    def __init__(self, directory: Path, outage: Outage) -> None:
        super().__init__(directory)
        self._outage = outage

    def add(self, entry: Spooled) -> None:
        super().add(entry)
        self._outage.down = False


def test_the_turn_memory_answers_again_recalls_what_was_said_while_it_was_away(tmp_path: Path) -> None:
    outage = outage_in(tmp_path)
    memory = service(outage)
    spool = Healing(tmp_path / "spool", outage)

    def down() -> None:
        outage.down = True

    chat = Switching({2: down}, *["Noted."] * 3)
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, spool=spool),
                     "hello there", "I live in Boston", "where do I live?")
    assert done.code == 0, done.log
    assert "memory: turn 2 is not remembered yet" in done.log
    assert "(turn 2, kept while memory was away) remembered: I live in Boston" in done.log
    assert "Boston" in chat.requests[-1][0].content, "recalled on the turn memory answered again"
    assert not spool.has_waiting()


def test_why_after_a_recall_that_failed_says_memory_did_not_answer(tmp_path: Path) -> None:
    outage = outage_in(tmp_path)
    memory = service(outage)

    def down() -> None:
        outage.down = True

    chat = Switching({2: down}, *["Noted."] * 3)  # down after the recall of the second turn
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, spool=Spool(tmp_path / "spool")),
                     "I live in Boston", "where do I live?", "/why", "and my sister?", "/why")
    assert done.code == 0, done.log
    # The first /why shows the memories of the second reply; the second says why the third had none.
    assert "The memory went into the system message" in done.log
    assert "No reply with memory yet" not in done.log
    assert done.log.rstrip().endswith(f"Memory did not answer for the last message ({AWAY}): none was injected.")
