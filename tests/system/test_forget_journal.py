"""The record a forget keeps in the ledger until its words have left every other file (``agent.forget``): written
in the same transaction that deletes the memories, read by the next start when a forget was cut short, and
zeroed when it is dropped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent import forget
from agent.adapters.ledger import SqliteLedger
from agent.conversation import Turn
from agent.forget import FORGOTTEN, Places
from agent.sessions import Session, SessionStore
from tests.chat_fakes import ScriptedChat
from tests.helpers_store import ledger_of
from tests.repl_harness import build_chat, memory_service, run_lines

SECRET = "I hide my spare key under the CANARY-Zq81x flowerpot"
CHESS = "I play chess with my brother every week"
NEEDLES = (b"canary", b"zq81x", b"flowerpot")


def leaks(root: Path) -> list[str]:
    return sorted(str(f.relative_to(root)) for f in root.rglob("*")
                  if f.is_file() and not f.is_symlink() and any(n in f.read_bytes().lower() for n in NEEDLES))


def places(root: Path) -> Places:
    store = SessionStore(root / "sessions", "default")
    store.save(Session("monday", 1.0, 2.0, [Turn(SECRET, "Noted."), Turn("What is the capital of Peru?", "Lima.")]))
    (root / "history").write_text(f"\n# 2026-01-02 10:00:00.000000\n+{SECRET}\n")
    return Places(store, root / "history")


def test_the_record_is_written_with_the_delete_and_leaves_no_byte_when_dropped(tmp_path: Path) -> None:
    memory = memory_service(tmp_path)
    secret, chess = memory.add(SECRET), memory.add(CHESS)
    ledger = ledger_of(memory)
    key, deleted = ledger.record_forget("me", [secret.id, "0" * 32], [SECRET])
    assert deleted == 1 and [r.id for r in memory.list()] == [chess.id]
    [pending] = ledger.pending_forgets()
    assert (pending.key, pending.user, pending.ids, pending.texts) == (key, "me", (secret.id, "0" * 32), (SECRET,))
    assert leaks(tmp_path) == ["ledger.sqlite3"], "until it is done, the record holds the words"
    ledger.acknowledge_forget(key, "")
    assert ledger.pending_forgets() == [] and leaks(tmp_path) == []
    assert secret.id.encode() not in (tmp_path / "ledger.sqlite3").read_bytes()


def test_a_ledger_that_never_forgot_has_no_record_and_no_table(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3")
    assert ledger.pending_forgets() == []
    ledger.acknowledge_forget(1, "")
    assert ledger.pending_forgets() == []


def test_contexts_are_rewritten_in_place_keeping_the_memory_and_no_byte_of_the_old_one(tmp_path: Path) -> None:
    memory = memory_service(tmp_path)
    [chess] = memory.observe(CHESS, session="s", turn=2, when=5.0, extra={"context": f"Got it: {SECRET}."}).stored
    assert forget.scrub_contexts(memory, forget.Forgotten([SECRET])) == 1
    [kept] = memory.list()
    assert (kept.id, kept.created_at, kept.extra) == (chess.id, 5.0, {"context": f"Got it: {FORGOTTEN}."})
    assert memory.search("chess with my brother", 1)[0].record.id == chess.id
    assert ledger_of(memory).keyword_search("me", "flowerpot", 5) == []
    assert leaks(tmp_path) == []


def test_a_forget_stopped_after_its_first_step_is_finished_by_the_next_start_and_said_once(tmp_path: Path) -> None:
    where = places(tmp_path)
    memory = memory_service(tmp_path / "mem")
    secret = memory.add(SECRET)
    begun = forget.begin(memory, [secret])  # then the process is killed: nothing scrubbed, the record stays
    assert begun.count == 1 and memory.list() == []
    memory.close()

    ledger = SqliteLedger(tmp_path / "mem" / "ledger.sqlite3")  # the next start
    assert forget.finish_cut_short(ledger, lambda user: where) == (
        "Finished a forget that was cut short (1 memory): their words were removed from session monday, the input "
        "history.")
    assert leaks(tmp_path) == []
    assert forget.finish_cut_short(ledger, lambda user: where) is None
    assert SessionStore(tmp_path / "sessions", "default").load("monday").turns[0].user == FORGOTTEN


def test_a_session_held_by_another_process_keeps_the_record_until_it_can_be_scrubbed(tmp_path: Path) -> None:
    where = places(tmp_path)
    memory = memory_service(tmp_path / "mem")
    forget.begin(memory, [memory.add(SECRET)])
    code = ("import sys, time; from pathlib import Path; from agent.sessions import SessionStore\n"
            "with SessionStore(Path(sys.argv[1]), 'default').lock('monday'):\n"
            "    print('locked', flush=True); sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(where.sessions.directory)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        assert forget.finish_cut_short(ledger_of(memory), lambda user: where) == (
            "A forget that was cut short (1 memory) is not finished: its words stay in 1 session open in another "
            "agent process (monday); the next start of agent tries again.")
        assert len(memory.pending_forgets()) == 1
    finally:
        holder.communicate("", timeout=120)
    assert forget.finish_cut_short(ledger_of(memory), lambda user: where) == (
        "Finished a forget that was cut short (1 memory): their words were removed from session monday.")
    assert leaks(tmp_path) == []


def test_critical_holds_ctrl_c_until_the_block_is_done_and_says_it_came(tmp_path: Path) -> None:
    # The handler of an interpreter started at a terminal: a test run started in the background of a shell has
    # SIGINT ignored, and there this test failed. raise_signal delivers to this thread, so Python runs the handler
    # at once, between two bytecodes (a kill of the process may go to another of its threads).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with forget.critical() as held:
            signal.raise_signal(signal.SIGINT)
            reached = True
        assert reached and held.interrupted
        with forget.critical() as quiet:
            pass
        assert not quiet.interrupted
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the usual handler is back"
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_during_a_forget_in_the_chat_waits_for_it_to_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    where = places(tmp_path)
    memory = memory_service(tmp_path / "mem")
    memory.add(SECRET)
    record_forget = ledger_of(memory).record_forget

    def interrupted(*args: Any) -> tuple[int, int]:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the memory thread writes the record
        return record_forget(*args)

    monkeypatch.setattr(ledger_of(memory), "record_forget", interrupted)
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: memory, session="friday",
                                history=where.history), "/memories", "/forget 1")

    assert done.log.splitlines()[-3:] == [
        "Forgot 1 memory.",
        "The forgotten words were also removed from session monday, the input history.",
        "(Ctrl-C waited for the forget to finish.)"]
    assert memory.pending_forgets() == [] and leaks(tmp_path) == []


def test_a_symlinked_history_is_not_followed_and_leaves_no_forget_pending(tmp_path: Path) -> None:
    """Issue 19 §14: a history replaced by a symlink made every start say the forget was not finished, for ever
    (the scrub refused the link, rightly, and kept the record). The link is still not followed nor written
    through; the forget finishes and says once where the words still are."""
    where = places(tmp_path)
    assert where.history is not None
    target = tmp_path / "elsewhere"
    where.history.rename(target)
    where.history.symlink_to(target)
    memory = memory_service(tmp_path / "mem")
    forget.begin(memory, [memory.add(SECRET)])

    told = forget.finish_cut_short(ledger_of(memory), lambda user: where)

    assert told is not None and told.startswith("Finished a forget that was cut short (1 memory): "), told
    assert (f"; not scrubbed, as a symlink out of the data directory is never followed (nor written through by "
            f"agent): {where.history} (to {target}, which still holds them: remove them there).") in told
    assert memory.pending_forgets() == [], "no forget is left pending for the next start"
    assert where.history.is_symlink() and SECRET in target.read_text(), "the link and its target are left as they are"
    assert forget.finish_cut_short(ledger_of(memory), lambda user: where) is None
