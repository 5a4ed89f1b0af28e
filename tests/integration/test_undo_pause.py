"""``/undo`` takes back the last exchange and the memories it wrote, leaving no byte of them; ``/pause`` and
``/resume`` hold what is said from memory inside a chat; ``--read-only`` recalls and never writes. In-process, with
the scripted model and the real session files and ledger on ``tmp_path``."""

from __future__ import annotations

import re
from pathlib import Path

from agent.conversation import Turn
from agent.sessions import Session, SessionStore
from tests.chat_fakes import ScriptedChat
from tests.repl_harness import build_chat, memory_service, run_lines

SECRET = "I hide my spare key under the CANARY-Zq81x flowerpot"
CHESS = "I play chess with my brother every week"
NEEDLES = (b"canary", b"zq81x", b"flowerpot")


def leaks(*paths: Path) -> list[str]:
    """Every file under ``paths`` whose raw bytes hold a needle, whatever its case."""
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return [str(f) for f in files if any(n in f.read_bytes().lower() for n in NEEDLES)]


def test_undo_drops_the_exchange_and_forgets_what_it_wrote_from_every_file(tmp_path: Path) -> None:
    (tmp_path / "history").write_text(f"\n# 2026-01-02 10:00:00.000000\n+{CHESS}\n"
                                      f"\n# 2026-01-02 10:00:05.000000\n+{SECRET}\n")
    chat = ScriptedChat("Chess is fun.", "Got it: the flowerpot.", "You play chess.")
    memory = memory_service(tmp_path / "mem")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory, history=tmp_path / "history"),
                     CHESS, SECRET, "/undo", "What do you know about me?")

    assert done.code == 0
    assert (f"Undid turn 2 (you: {SECRET}); forgot the memory it wrote: {SECRET}.\n"
            "The forgotten words were also removed from the input history.\n") in done.log
    assert [r.text for r in memory.list()] == [CHESS], "the memory of turn 1 stays"
    session = done.session
    assert [(t.user, t.reply) for t in session.turns] == [(CHESS, "Chess is fun."),
                                                          ("What do you know about me?", "You play chess.")]
    assert [m.content for m in chat.requests[-1] if m.role == "user"] == [CHESS, "What do you know about me?"]
    assert leaks(tmp_path / "sessions", tmp_path / "history", tmp_path / "mem") == []


def test_undo_keeps_a_memory_the_turn_only_restated_and_says_it_wrote_none(tmp_path: Path) -> None:
    chat = ScriptedChat("Chess is fun.", "You said so.")
    memory = memory_service(tmp_path / "mem")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), CHESS, CHESS.upper(), "/undo", "/undo",
                     "/undo")

    assert done.log.count("already remembered: ") == 1
    assert f"Undid turn 2 (you: {CHESS.upper()}); it wrote no memory.\n" in done.log
    assert f"Undid turn 1 (you: {CHESS}); forgot the memory it wrote: {CHESS}.\n" in done.log
    assert done.log.endswith("Nothing to undo yet.\n")
    assert memory.list() == [] and done.session.turns == []


def test_undo_of_a_turn_from_an_earlier_run_finds_its_memories_in_the_ledger(tmp_path: Path) -> None:
    first = memory_service(tmp_path / "mem")
    run_lines(build_chat(tmp_path, ScriptedChat("Chess is fun."), memory=lambda: first, session="s"), CHESS)
    first.add("I like tea", session="s", turn=1)  # a /remember after turn 1 is not that turn's
    again = memory_service(tmp_path / "mem")
    done = run_lines(build_chat(tmp_path, ScriptedChat(), memory=lambda: again, session="s"), "/undo")

    assert f"Undid turn 1 (you: {CHESS}); forgot the memory it wrote: {CHESS}.\n" in done.log
    assert [r.text for r in again.list()] == ["I like tea"]


def test_undo_without_memory_still_drops_the_turn(tmp_path: Path) -> None:
    SessionStore(tmp_path / "sessions", "default").save(Session("s", 1.0, 2.0, [Turn(CHESS, "Fun.")]))
    done = run_lines(build_chat(tmp_path, ScriptedChat(), session="s"), "/undo")
    assert done.log == (f"Undid turn 1 (you: {CHESS}); long-term memory is off in this run, so no memory was "
                        "looked at.\n")
    assert done.session.turns == []


def test_pause_holds_what_is_said_from_memory_until_resume(tmp_path: Path) -> None:
    chat = ScriptedChat("Noted.", "Noted.")
    memory = memory_service(tmp_path / "mem")
    done = run_lines(build_chat(tmp_path, chat, memory=lambda: memory), "/pause", SECRET, "/session",
                     "/remember I like tea", "/resume", CHESS, "/session")

    assert "Paused: nothing you say is remembered until /resume." in done.log
    assert "Remembering again: what you say from now on goes to memory." in done.log
    assert sorted(r.text for r in memory.list()) == ["I like tea", CHESS]
    assert "remembered: I hide" not in done.log
    assert re.findall(r"^memory +(.+?) *$", done.out, re.M) == ["0 memories, paused", "2 memories"]
    assert "memories 2" in done.repl.toolbar()


def test_read_only_recalls_and_writes_nothing(tmp_path: Path) -> None:
    memory = memory_service(tmp_path / "mem")
    memory.add(CHESS, session="old", turn=1)
    before = [(r.id, r.last_seen) for r in memory.list()]
    chat = ScriptedChat("Nice.", "Noted.")
    built = build_chat(tmp_path, chat, memory=lambda: memory, read_only=True)
    done = run_lines(built, "Do I play chess with my brother?", SECRET, "/remember I like tea", "/forget 1",
                     "/pause", "/undo")

    assert CHESS in chat.requests[0][0].content, "recall goes on"
    assert done.log.count("Memory is read-only in this run (--read-only)") == 3
    assert "remembered:" not in done.log
    assert f"Undid turn 2 (you: {SECRET}); it wrote no memory.\n" in done.log
    assert [(r.id, r.last_seen) for r in memory.list()] == before, "not even last_seen is written"
    assert "memories 1, read-only" in done.repl.toolbar()
