"""``/undo`` returns the store to exactly what it was before the turn (issue 19 item 9, issue 21 defect 2): a turn
kept in the spool while the store was away, a turn merged into a memory it said again, a turn cut at a link, a move
that replaced a home, a correction that replaced an allergy, words said again after they were replaced. Forgetting
the memory that replaced another makes the other current again, and says so. In-process through the REPL harness,
with the real session files and SQLite ledger on ``tmp_path``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from agent.adapters.ledger import SqliteLedger
from agent.domain import Turn
from agent.forget import Places, forget, inline
from agent.memory import transfer
from agent.memory.service import MemoryService
from agent.sessions import Session, SessionStore
from agent.spool import Spool
from tests.chat_fakes import ScriptedChat
from tests.helpers_store import ledger_of, vectors_of
from tests.outage import Outage, Switching, outage_in, service
from tests.repl_harness import build_chat, memory_service, run_lines

BOSTON = "I live in Boston"
BERLIN = "I moved to Berlin last month"
SHELLFISH = "I'm allergic to shellfish"
NOT_SHELLFISH = "I'm not allergic to shellfish anymore"


def state(memory: MemoryService) -> list[dict[str, object]]:
    """Every memory as the export writes it, less the time it was last seen (a recall moves that, and is no
    write of a turn): what undo must give back byte for byte."""
    return [{k: v for k, v in transfer.portable(r).items() if k != "last_seen"} for r in memory.list()]


def system(chat: ScriptedChat, request: int = -1) -> str:
    return " ".join(m.content for m in chat.requests[request] if m.role == "system")


def leaks(root: Path, *needles: bytes) -> list[str]:
    files = [root] if root.is_file() else [f for f in root.rglob("*") if f.is_file()]
    return [str(f) for f in files if any(n in f.read_bytes().lower() for n in needles)]


def test_undo_of_a_move_makes_the_old_home_current_again_in_the_profile_and_the_next_request(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Boston is lovely.")
    run_lines(build_chat(tmp_path, chat, memory=lambda: memory), BOSTON, "/profile", BERLIN)
    berlin = next(r.id for r in memory.list() if "Berlin" in r.text)
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), "/undo", "Where do I live?")

    assert done.code == 0, done.log
    assert f"Undid turn 2 (you: {BERLIN}); forgot the memory it wrote: I moved to Berlin" in done.log
    assert f"Current again, now that the memory that replaced it is gone: {BOSTON}\n" in done.log
    [boston] = memory.list()
    assert boston.text == BOSTON and boston.current and [(f.key, f.value, f.superseded_by) for f in boston.facts] == [
        ("home", "Boston", "")]
    assert "lives in: Boston" in system(chat) and "Berlin" not in system(chat)
    current, history = memory.profile()
    assert [(e.key, e.value) for e in current] == [("home", "Boston")] and history == []
    memory.close()
    assert leaks(tmp_path, berlin.encode(), b"berlin") == [], "no forgotten id in a link or a change, no word of it"


def test_undo_of_a_retraction_gives_the_allergy_back_and_the_next_request_carries_it(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Here is a paella.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), SHELLFISH, NOT_SHELLFISH, "/undo",
                     "/memories", "Give me a seafood paella recipe")

    assert done.code == 0, done.log
    assert f"Current again, now that the memory that replaced it is gone: {SHELLFISH}\n" in done.log
    assert "No memories yet" not in done.log and SHELLFISH in done.log.split("/undo")[-1]
    assert "allergies: shellfish" in system(chat)
    assert [(r.text, r.current) for r in memory.list()] == [(SHELLFISH, True)]


def test_forgetting_the_memory_that_replaced_another_makes_that_one_current_again_and_says_so(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Here is a paella.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), SHELLFISH, NOT_SHELLFISH, "/memories",
                     "/forget 1", "Give me a seafood paella recipe")

    assert done.code == 0, done.log
    assert f"forgot: {NOT_SHELLFISH}\n" in done.log
    assert f"Current again, now that the memory that replaced it is gone: {SHELLFISH}\n" in done.log
    assert "allergies: shellfish" in system(chat)
    assert [(r.text, r.current) for r in memory.list()] == [(SHELLFISH, True)]


def test_forgetting_the_middle_of_three_homes_leaves_the_first_replaced_by_the_last(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Noted.", "Munich it is.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), BOSTON, "I moved to Berlin",
                     "I moved to Munich", "/memories --history", "/forget 1", "Where do I live?")

    assert done.code == 0, done.log
    assert "Current again" not in done.log, "nothing is current again: Munich replaces Boston now"
    by_text = {r.text: r for r in memory.list()}
    assert set(by_text) == {BOSTON, "I moved to Munich"}
    assert by_text[BOSTON].superseded_by == by_text["I moved to Munich"].id
    assert [f.superseded_by for f in by_text[BOSTON].facts] == [by_text["I moved to Munich"].id]
    assert "lives in: Munich" in system(chat) and "Boston" not in system(chat)


def test_undo_of_a_restatement_takes_its_words_out_of_the_memory_and_every_file(tmp_path: Path) -> None:
    (tmp_path / "history").write_text("")
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.")
    again = "I'm allergic to peanuts, my doctor Zanzibar says"
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, history=tmp_path / "history"),
                     "I'm allergic to peanuts", "/remember I like tea", again, "/undo")
    assert done.code == 0, done.log
    assert "remembered again: I'm allergic to peanuts" in done.log, "the turn was merged as a restatement"
    assert (f"Undid turn 2 (you: {again}); took its words out of the memory it said again: I'm allergic to "
            "peanuts.\n") in done.log
    peanuts = next(r for r in memory.list() if "peanuts" in r.text)
    assert peanuts.restated == (), "no quote left"
    assert ledger_of(memory).keyword_search("me", "zanzibar", 5) == [], "nor in the keyword index"
    assert "ZANZIBAR" not in json.dumps([transfer.portable(r) for r in memory.list()])
    assert [r.text for r in memory.list()] == ["I'm allergic to peanuts", "I like tea"], "the /remember stays"
    memory.close()
    assert leaks(tmp_path, b"zanzibar") == []


def test_undo_of_a_turn_cut_at_a_link_forgets_the_part_that_was_kept(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    line = "I'm allergic to penicillin, see drugs.com for details"
    chat = ScriptedChat("Noted.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), line, "/undo")

    assert done.code == 0, done.log
    assert "remembered: I'm allergic to penicillin" in done.log
    assert f"Undid turn 1 (you: {line}); forgot the memory it wrote: I'm allergic to penicillin.\n" in done.log
    assert memory.list() == [] and memory.profile() == ([], [])


def test_undo_of_words_said_again_after_they_were_replaced_puts_the_replacement_back(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Noted.", "Berlin.")
    script = [BOSTON, "I moved to Berlin", "/memories --history"]
    first = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), *script)
    assert first.code == 0
    before = state(memory)
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), BOSTON, "/undo", "Where do I live?")

    assert done.code == 0, done.log
    assert f"Undid turn 3 (you: {BOSTON}); what it replaced is current again: I moved to Berlin.\n" in done.log
    assert state(memory) == before, "exactly as before the turn"
    assert "lives in: Berlin" in system(chat) and "Boston" not in system(chat)


def test_each_undo_gives_back_the_store_exactly_as_it_was_before_that_turn(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    lines = [SHELLFISH, BOSTON, "I'm allergic to shellfish, seriously", "I moved to Berlin", NOT_SHELLFISH,
             BOSTON, "I live in Munich and I'm vegan"]
    states = []
    chat = ScriptedChat(*["Noted."] * len(lines))
    for line in lines:
        states.append(state(memory))
        run_lines(build_chat(tmp_path, chat, memory=lambda: memory), line)
    for expected in reversed(states):
        done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), "/undo")
        assert state(memory) == expected, done.log
    assert ledger_of(memory).changes("me") == [], "every change taken back went"


def switch(outage: Outage, down: bool) -> Callable[[], None]:
    """What a ``Switching`` chat runs at a turn: the store goes away (``down``) or answers again."""

    def run() -> None:
        outage.down = down

    return run


def test_undo_of_a_turn_kept_in_the_spool_takes_it_out_so_it_is_never_remembered(tmp_path: Path) -> None:
    outage, spool = outage_in(tmp_path), Spool(tmp_path / "spool")
    chat = Switching({2: switch(outage, True), 3: switch(outage, False)}, "Noted.", "Noted.", "Noted.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: service(outage), spool=spool),
                     "I play chess with my brother", BERLIN, "/undo", "I like green tea")

    assert done.code == 0, done.log
    assert "memory: turn 2 is not remembered yet" in done.log
    assert (f"Undid turn 2 (you: {BERLIN}); it had not reached memory (the store did not answer), and it no "
            "longer waits to be remembered.\n") in done.log
    assert not spool.has_waiting()
    assert sorted(r.text for r in outage.ledger.all("me")) == ["I like green tea", "I play chess with my brother"]


def test_undo_while_the_store_is_still_away_takes_the_spooled_turn_back(tmp_path: Path) -> None:
    outage, spool = outage_in(tmp_path), Spool(tmp_path / "spool")
    chat = Switching({1: switch(outage, True)}, "Noted.")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: service(outage), spool=spool), BERLIN, "/undo")
    assert done.code == 0, done.log
    assert "it no longer waits to be remembered" in done.log and not spool.has_waiting()
    assert done.session.turns == []
    outage.down = False
    assert outage.ledger.all("me") == []


def test_links_are_left_as_they_are_when_another_terminal_changed_them_since(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    chat = ScriptedChat("Noted.", "Noted.", "Noted.")
    run_lines(build_chat(tmp_path, chat, memory=lambda: memory), BOSTON, "I moved to Berlin", BOSTON)
    other = MemoryService(SqliteLedger(tmp_path / "mem" / "ledger.sqlite3"), vectors_of(memory), memory.embedder, "me")
    other.remember("I moved to Munich", session="elsewhere")  # another terminal, after the third turn revived Boston
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), "/undo")

    assert done.code == 0, done.log
    homes = [(r.text, r.current) for r in memory.list()]
    assert homes == [(BOSTON, False), ("I moved to Berlin", False), ("I moved to Munich", True)], homes
    assert [(e.key, e.value) for e in memory.profile()[0]] == [("home", "Munich")]


def test_a_change_is_recorded_before_the_write_and_names_what_the_turn_created(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    report = memory.observe(BOSTON, session="s", turn=1)
    [change] = ledger_of(memory).changes("me")
    assert (change.session, change.turn, change.created, change.touched) == ("s", 1, (report.stored[0].id,), ())
    memory.observe(BOSTON, session="s", turn=2)  # the same words: nothing created or changed
    assert len(ledger_of(memory).changes("me")) == 1


def test_forget_drops_every_change_that_names_the_memory(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    run_lines(build_chat(tmp_path, ScriptedChat("Noted.", "Noted.", "Noted."), memory=lambda: memory),
              BOSTON, "I moved to Berlin", BOSTON)
    berlin = next(r for r in memory.list() if "Berlin" in r.text)
    assert any(berlin.id in c.names() for c in ledger_of(memory).changes("me"))
    forget(inline(memory), [berlin], Places(SessionStore(tmp_path / "sessions", "default")))
    assert not any(berlin.id in c.names() for c in ledger_of(memory).changes("me"))


def test_undo_of_a_turn_written_before_changes_were_kept_finds_its_memory_and_quote_by_provenance(
    tmp_path: Path,
) -> None:
    """A store written by an older version keeps no change: the turn's memories and quotes name its session, turn and
    words, and that is enough."""
    memory = memory_service(tmp_path / "mem")
    memory.observe("I'm allergic to peanuts", session="old", turn=1)
    memory.observe("I play chess with my brother", session="old", turn=2)
    memory.observe("I'm allergic to peanuts, my doctor says", session="old", turn=3)  # a restatement of turn 1
    ledger = ledger_of(memory)
    ledger.drop_changes("me", [c.key for c in ledger.changes("me")])  # as an older version left it
    SessionStore(tmp_path / "sessions", "default").save(Session("old", 1.0, 2.0, [
        Turn("I'm allergic to peanuts", "Noted."), Turn("I play chess with my brother", "Noted."),
        Turn("I'm allergic to peanuts, my doctor says", "Noted.")]))
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory, session="old"), "/undo", "/undo")

    assert "Undid turn 3 (you: I'm allergic to peanuts, my doctor says); took its words out of the memory it said " \
           "again: I'm allergic to peanuts.\n" in done.log
    assert "Undid turn 2 (you: I play chess with my brother); forgot the memory it wrote: I play chess" in done.log
    [peanuts] = memory.list()
    assert peanuts.text == "I'm allergic to peanuts" and peanuts.restated == ()
