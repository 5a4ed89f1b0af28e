"""Two live notes on one subject that no rule decided are shown together, oldest first, the newest marked current
where they disagree; nothing is hidden (issue 20, item 5)."""

from __future__ import annotations

from pathlib import Path

from agent.adapters.local_embedder import LocalEmbedder
from agent.domain import MemoryRecord, ScoredMemory
from agent.memory import timeline
from agent.memory.context import build_block
from tests.repl_harness import memory_service


def _scored(text: str, at: float, similarity: float) -> ScoredMemory:
    record = MemoryRecord(id=text, text=text, kind="turn", user="me", session="s", turn=1, created_at=at,
                          last_seen=at, content_hash=text, source=text)
    return ScoredMemory(record, similarity, similarity)


def test_an_update_no_rule_reads_is_shown_after_the_old_note_and_marked_current(tmp_path: Path,
                                                                              local_embedder: LocalEmbedder) -> None:
    service = memory_service(tmp_path / "mem", local_embedder)
    service.observe("My favourite band at the moment is Radiohead", session="s", turn=1, when=1_700_000_000)
    service.observe("These days I listen to Massive Attack more than any other band", session="s", turn=2,
                    when=1_700_900_000)
    service.observe("I had toast for breakfast", session="s", turn=3, when=1_701_000_000)
    block = service.recall("what band do I like most?").block.text
    notes = [line for line in block.splitlines() if line.startswith("- [")]
    radiohead = next(n for n in notes if "Radiohead" in n)
    massive = next(n for n in notes if "Massive Attack" in n)
    assert notes.index(radiohead) + 1 == notes.index(massive)
    assert timeline.OLDER in radiohead and timeline.NEWEST in massive
    assert all(timeline.NEWEST not in n and timeline.OLDER not in n for n in notes if "toast" in n)


def test_notes_on_one_subject_go_together_where_the_first_was(local_embedder: LocalEmbedder) -> None:
    texts = ["I moved to Lisbon", "My sister is a dentist", "I live in Porto"]
    memories = [_scored(t, at, s) for t, at, s in zip(texts, (3.0, 1.0, 2.0), (0.9, 0.8, 0.7), strict=True)]
    vectors = dict(zip(texts, local_embedder.embed(texts), strict=True))
    ordered, marks = timeline.arrange(memories, vectors)
    assert [m.record.text for m in ordered] == ["I live in Porto", "I moved to Lisbon", "My sister is a dentist"]
    assert marks == {"I live in Porto": timeline.OLDER, "I moved to Lisbon": timeline.NEWEST}
    text = build_block(ordered, 800, marks=marks).text
    assert text.index("I live in Porto") < text.index("I moved to Lisbon") < text.index("My sister is a dentist")


def test_two_speakers_of_a_transcript_are_never_one_subject(local_embedder: LocalEmbedder) -> None:
    texts = ["(8 May 2023) Ada: I live in Porto", "(9 May 2023) Bo: I live in Porto too"]
    memories = [_scored(t, n, 0.8) for n, t in enumerate(texts)]
    assert timeline.arrange(memories, dict(zip(texts, local_embedder.embed(texts), strict=True)))[1] == {}
