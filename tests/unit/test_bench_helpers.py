"""Small pieces of the latency and calibration scripts: synthetic memories, the timed embedder, the threshold rule."""

from __future__ import annotations

from bench.calibrate import choose
from bench.latency import TimedEmbedder, probes, records, sentences


def test_sentences_are_distinct_and_as_many_as_asked() -> None:
    texts = sentences(3_000)
    assert len(texts) == 3_000 and len(set(texts)) == 3_000
    assert sentences(50) == sentences(50)  # seeded: every run measures the same memories


def test_records_have_unique_ids_and_keep_the_text() -> None:
    made = records(sentences(100), start=10)
    assert len({r.id for r in made}) == 100
    assert made[0].turn == 10 and made[0].text == made[0].source


def test_probes_are_questions_with_their_slots_filled() -> None:
    asked = probes(20)
    assert len(asked) == 20 and not any("{" in p for p in asked)


def test_timed_embedder_counts_time_and_passes_vectors_through() -> None:
    class Fixed:
        name, model, dimension = "fake", "fixed", 2

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

    timed = TimedEmbedder(Fixed())
    assert timed.embed(["a", "b"]) == [[1.0, 0.0], [1.0, 0.0]]
    assert timed.seconds > 0 and timed.name == "fake"


def test_choose_takes_the_lowest_threshold_within_the_leak() -> None:
    rows = [{"threshold": t, "foreign_leak": leak} for t, leak in ((0.2, 0.5), (0.3, 0.04), (0.4, 0.01))]
    assert choose(rows, 0.05) == 0.3
    assert choose(rows, 0.001) == 0.4  # none qualifies: the highest swept
