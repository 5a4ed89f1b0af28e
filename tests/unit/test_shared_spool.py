"""A memory store that goes away mid-chat (issue 11 §2: a shared deployment's database server): the chat goes on,
says so once, never claims a turn was remembered that was not, keeps what the gate wanted on this machine
(``agent.spool``) and writes it, in the order it was said, once the store answers again. In-process, with a ledger
that can be switched off; the same through real PostgreSQL and Chroma servers is in
tests/system/test_shared_deployment.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.adapters.ledger import SqliteLedger
from agent.forget import OfUser, Places, finish
from agent.sessions import SessionStore
from agent.spool import Spool, Spooled
from tests.chat_fakes import ScriptedChat
from tests.outage import AWAY, Outage, Switching, outage_in, service
from tests.repl_harness import build_chat, run_lines


def texts(outage: Outage) -> set[str]:
    return {r.text for r in outage.ledger.all("me")}


def test_a_store_away_mid_chat_is_said_once_keeps_the_turns_and_writes_them_in_order_when_back(
    tmp_path: Path,
) -> None:
    outage = outage_in(tmp_path)
    memory = service(outage)
    spool = Spool(tmp_path / "spool")

    def down() -> None:
        outage.down = True

    def up() -> None:
        outage.down = False

    chat = Switching({2: down, 5: up}, *["Noted."] * 6)
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, spool=spool),
                     "My sister is called Ada", "hello there", "I live in Boston", "My dog is called Rex",
                     "I moved to Lisbon", "where do I live?")
    log = done.log
    assert done.code == 0 and done.out == "Noted.\n" * 6, "every turn is answered"
    assert log.count("memory: recall failed") == 1, log
    assert f"memory: recall failed ({AWAY}); the replies have no memories until it answers again." in log
    assert f"memory: turn 3 is not remembered yet ({AWAY}); it is kept on this machine and remembered when " \
           "memory answers again" in log
    assert "memory: turn 4 is kept on this machine too, until memory answers again" in log
    # Said as remembered only when it was: once the store answered, naming the turn it came from.
    assert log.count("remembered: I live in Boston") == 1
    assert "(turn 3, kept while memory was away) remembered: I live in Boston" in log
    assert "(turn 4, kept while memory was away) remembered: My dog is called Rex" in log
    assert log.index("kept while memory was away) remembered: I live") < log.index("remembered: I moved to Lisbon")
    assert "(memory answers again)" in log
    assert not spool.has_waiting()
    assert {"My sister is called Ada", "I live in Boston", "My dog is called Rex", "I moved to Lisbon"} <= texts(outage)
    current, _ = memory.profile()
    assert [(e.key, e.value) for e in current if e.key == "home"] == [("home", "Lisbon")], "the later word wins"
    assert "Lisbon" in chat.requests[-1][0].content
    stored = {r.text: r for r in outage.ledger.all("me")}
    assert (stored["I live in Boston"].session, stored["I live in Boston"].turn) == ("test", 3)


def test_turns_left_waiting_when_a_chat_ends_are_written_by_the_next_one(tmp_path: Path) -> None:
    outage = outage_in(tmp_path)
    spool = Spool(tmp_path / "spool")
    memory = service(outage)

    def down() -> None:
        outage.down = True

    first = run_lines(build_chat(tmp_path, Switching({1: down}, "Noted."), memory=lambda: memory, spool=spool),
                      "My cat is called Miso")
    assert "memory: turn 1 is not remembered yet" in first.log and "remembered: My" not in first.log
    assert [entry.text for _, entry in spool.waiting()] == ["My cat is called Miso"]
    assert texts(outage) == set()

    outage.down = False
    second = run_lines(build_chat(tmp_path, ScriptedChat("Hi."), memory=lambda: memory, spool=spool, session="next"),
                       "hello")
    assert "(turn 1, kept while memory was away) remembered: My cat is called Miso" in second.log
    assert texts(outage) == {"My cat is called Miso"} and not spool.has_waiting()


def test_what_the_gate_does_not_keep_is_not_spooled_and_read_only_spools_nothing(tmp_path: Path) -> None:
    outage = outage_in(tmp_path)
    spool = Spool(tmp_path / "spool")

    def down() -> None:
        outage.down = True

    done = run_lines(build_chat(tmp_path, Switching({1: down}, "Hi."), memory=lambda: service(outage), spool=spool),
                     "hello there")
    assert "kept on this machine" not in done.log and not spool.has_waiting()
    outage.down = False
    done = run_lines(build_chat(tmp_path, Switching({1: down}, "Hi."), memory=lambda: service(outage), spool=spool,
                                read_only=True, session="ro"), "My cat is called Miso")
    assert "kept on this machine" not in done.log and not spool.has_waiting()


def test_a_forget_takes_its_words_out_of_the_waiting_turns(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.add(Spooled("My cat is called Miso", "s", 1, 1.0))
    spool.add(Spooled("I play the cello", "s", 2, 2.0, context="You said: my cat is called Miso. Noted."))
    spool.add(Spooled("I like tea", "s", 3, 3.0))
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    key, _ = ledger.record_forget("me", [], ["My cat is called Miso"])
    record = next(r for r in ledger.pending_forgets() if r.key == key)
    outcome = finish(record, OfUser(ledger, "me"), Places(SessionStore(tmp_path / "sessions", "me"), spool=spool))
    assert "the turns waiting for the memory store" in outcome.places
    left = [entry for _, entry in spool.waiting()]
    assert [entry.text for entry in left] == ["I play the cello", "I like tea"]
    assert left[0].context == "You said: [forgotten]. Noted."
    assert not any(b"Miso" in path.read_bytes() for path in (tmp_path / "spool").iterdir())


def test_a_forget_that_commits_while_a_waiting_turn_is_written_is_not_undone(tmp_path: Path) -> None:
    """Issue 19 §1, the tightest order: the replay finds no forget naming the turn, and another process's forget of
    those words commits before the replay's own write does. The replay checks again after writing, and forgets what it
    wrote of them, as that forget would have."""
    root = tmp_path / "mem"
    root.mkdir()
    ledger = SqliteLedger(root / "ledger.sqlite3")
    elsewhere = SqliteLedger(root / "ledger.sqlite3")  # the other process
    outage = Outage(ledger)
    spool = Spool(tmp_path / "spool")
    spool.add(Spooled("My cat is called Miso", "earlier", 1, 1.0))
    put = ledger.put

    def forgotten_meanwhile(records: Any, *rest: Any, **named: Any) -> None:
        elsewhere.record_forget("me", [], ["My cat is called Miso"])
        put(records, *rest, **named)

    ledger.put = forgotten_meanwhile  # type: ignore[method-assign]
    done = run_lines(build_chat(tmp_path, ScriptedChat("Hi."), memory=lambda: service(outage), spool=spool), "hello")
    assert "its words are not remembered: a forget made after they were said" in done.log, done.log
    assert texts(outage) == set() and not spool.has_waiting()
    assert len(elsewhere.pending_forgets()) == 2, "and the forget it made waits to scrub the files, like any"


def test_a_turn_kept_is_stamped_with_the_forgets_this_machine_knew_and_judged_by_them(tmp_path: Path) -> None:
    """Words said once a forget was known here are the user's own again: only a forget recorded after the count
    an entry carries holds it back; an entry of another ledger (or of none) counts every forget."""
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    ledger.record_forget("me", [], ["I play the cello"])
    spool = Spool(tmp_path / "spool")
    spool.add(Spooled("I play the cello", "s", 1, 1.0))  # nothing noted yet: knows no forget
    spool.note(ledger.store_id(), ledger.forget_mark())
    spool.add(Spooled("I play the cello", "s", 2, 2.0))
    first, second = (entry for _, entry in spool.waiting())
    assert (first.store, first.mark) == ("", 0) and (second.store, second.mark) == (ledger.store_id(), 1)
    assert ledger.forgotten_since("me", [first.text], first.mark) == [first.text]
    assert ledger.forgotten_since("me", [second.text], second.mark) == []
