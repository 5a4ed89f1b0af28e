"""The attribute classifier's head: trained on labelled vectors, deciding "unknown" where "none" is likelier or no
attribute likely enough, pooling the safety attributes, and kept between processes by a ``HeadStore``.

The vectors here are made by hand (clusters around orthogonal directions), so the decision rules are tested
without the model; what the head does with the real model's sentences is tests/integration/test_meaning.py's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from agent.adapters.head_files import HeadFiles
from agent.memory import attributes
from agent.memory.attributes import Attributes, Head

DIMENSION = 16
# Each class a direction of its own; "allergy" and "condition" are safety attributes.
CLASSES = {"home": 0, "pet": 1, "allergy": 2, "condition": 3, attributes.NONE: 4}


def around(direction: int | Sequence[tuple[int, float]], count: int, seed: int) -> list[list[float]]:
    """``count`` unit vectors near a direction (or a mix of directions, weighted)."""
    rng = np.random.default_rng(seed)
    mix = [(direction, 1.0)] if isinstance(direction, int) else list(direction)
    centre = np.zeros(DIMENSION)
    for axis, weight in mix:
        centre[axis] = weight
    vectors = centre + rng.normal(0, 0.08, (count, DIMENSION))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()


class TextVectors:
    """An embedder of the examples below: each text is the name of its vector."""

    name, model, dimension = "local", "hand-made", DIMENSION

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [self.table[text] for text in texts]


Labelled = tuple[dict[str, list[str]], TextVectors]


@pytest.fixture
def labelled() -> Labelled:
    table: dict[str, list[float]] = {}
    groups: dict[str, list[str]] = {}
    for name, axis in CLASSES.items():
        groups[name] = [f"{name} {n}" for n in range(30)]
        table.update(zip(groups[name], around(axis, 30, seed=axis), strict=True))
    return groups, TextVectors(table)


def test_a_vector_near_an_attribute_gets_it_and_one_near_none_is_unknown(labelled: Labelled) -> None:
    groups, embedder = labelled
    classifier = Attributes(embedder, 0.5, groups)
    home, pet, none = around(0, 1, 100) + around(1, 1, 101) + around(4, 1, 102)
    readings = classifier.classify([home, pet, none])
    assert [r.attribute if r else None for r in readings] == ["home", "pet", None]
    assert readings[0] is not None and readings[0].score > 0.5 and not readings[0].pooled


def test_a_vector_between_attributes_is_unknown_rather_than_a_guess(labelled: Labelled) -> None:
    groups, embedder = labelled
    classifier = Attributes(embedder, 0.9, groups)
    between = around([(0, 1.0), (1, 1.0)], 1, 103)
    assert classifier.classify(between) == [None]


def fixed(probabilities: dict[str, float]) -> Head:
    """A head that gives every vector these probabilities (no weights, the bias their logarithms)."""
    names = tuple(probabilities)
    return Head(np.zeros((DIMENSION, len(names)), np.float32),
                np.log(np.asarray([probabilities[n] for n in names], np.float32)), names)


def test_the_safety_attributes_pool_where_none_alone_would_win(labelled: Labelled) -> None:
    """"none" likeliest, no attribute likely enough alone, the safety ones together are: the likelier of them is
    named, marked as pooled."""
    groups, embedder = labelled
    classifier = Attributes(embedder, 0.5, groups)
    classifier.use(fixed({"home": 0.05, "pet": 0.05, "allergy": 0.25, "condition": 0.15, attributes.NONE: 0.5}))
    [reading] = classifier.classify(around(0, 1, 104))
    assert reading is not None and reading.pooled and reading.attribute == "allergy"
    assert reading.score == pytest.approx(0.4)


def test_no_pooling_where_another_attribute_is_likelier_than_the_safety_ones(labelled: Labelled) -> None:
    groups, embedder = labelled
    classifier = Attributes(embedder, 0.5, groups)
    classifier.use(fixed({"home": 0.4, "pet": 0.05, "allergy": 0.2, "condition": 0.15, attributes.NONE: 0.2}))
    assert classifier.classify(around(0, 1, 105)) == [None]


def test_too_little_safety_is_no_safety(labelled: Labelled) -> None:
    groups, embedder = labelled
    classifier = Attributes(embedder, 0.5, groups)
    classifier.use(fixed({"home": 0.1, "pet": 0.1, "allergy": 0.1, "condition": 0.1, attributes.NONE: 0.6}))
    assert classifier.classify(around(0, 1, 105)) == [None]


class Kept:
    def __init__(self) -> None:
        self.heads: dict[str, Head] = {}

    def load(self, key: str) -> Head | None:
        return self.heads.get(key)

    def save(self, key: str, head: Head) -> None:
        self.heads[key] = head


def test_a_kept_head_is_loaded_and_the_examples_are_not_embedded_again(labelled: Labelled) -> None:
    groups, embedder = labelled
    kept = Kept()
    Attributes(embedder, 0.5, groups, heads=kept).warm_up()
    assert embedder.calls == 1 and len(kept.heads) == 1
    second = Attributes(embedder, 0.5, groups, heads=kept)
    assert [r.attribute if r else None for r in second.classify(around(1, 1, 106))] == ["pet"]
    assert embedder.calls == 1


def test_other_examples_are_another_key(labelled: Labelled) -> None:
    groups, embedder = labelled
    fewer = {name: texts[:-1] for name, texts in groups.items()}
    assert Attributes(embedder, 0.5, groups).key() != Attributes(embedder, 0.5, fewer).key()


def test_head_files_keep_a_head_whole_and_privately(tmp_path: Path, labelled: Labelled) -> None:
    groups, embedder = labelled
    files = HeadFiles(tmp_path)
    Attributes(embedder, 0.5, groups, heads=files).warm_up()
    [path] = tmp_path.glob("attributes-*.npz")
    assert path.stat().st_mode & 0o777 == 0o600
    loaded = Attributes(embedder, 0.5, groups, heads=HeadFiles(tmp_path))
    assert [r.attribute if r else None for r in loaded.classify(around(0, 1, 107))] == ["home"]
    assert embedder.calls == 1


@pytest.mark.parametrize("damage", [b"", b"not a zip file", b"PK\x03\x04 truncated"])
def test_a_damaged_head_file_is_removed_and_the_head_trained_again(tmp_path: Path, labelled: Labelled,
                                                                    damage: bytes) -> None:
    groups, embedder = labelled
    key = Attributes(embedder, 0.5, groups).key()
    path = tmp_path / f"attributes-{key[:32]}.npz"
    path.write_bytes(damage)
    assert HeadFiles(tmp_path).load(key) is None
    assert not path.exists()
    Attributes(embedder, 0.5, groups, heads=HeadFiles(tmp_path)).warm_up()
    assert embedder.calls == 1 and HeadFiles(tmp_path).load(key) is not None


def test_a_head_of_other_shapes_is_not_used(tmp_path: Path) -> None:
    files = HeadFiles(tmp_path)
    files.save("k" * 64, Head(np.zeros((4, 3), np.float32), np.zeros(2, np.float32), ("a", "b", "c")))
    assert files.load("k" * 64) is None


def test_a_cache_that_cannot_be_written_costs_only_the_training(tmp_path: Path, labelled: Labelled) -> None:
    groups, embedder = labelled
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache directory would be")
    classifier = Attributes(embedder, 0.5, groups, heads=HeadFiles(blocked / "agent"))
    assert [r.attribute if r else None for r in classifier.classify(around(1, 1, 108))] == ["pet"]
