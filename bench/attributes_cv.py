"""How well the attribute classifier names attributes it was not trained on: ``python bench/attributes_cv.py
[--folds 5] [--json]``.

The labelled sentences of ``agent/memory/attributes.json`` are split into folds (a fixed seed); each fold is
classified by a head trained on the others (``agent.memory.attributes.train``, the product's own training and
decision, the safety mass included), and, beside it, by the rule the product used before the head: the mean
similarity of the three nearest examples of each attribute, named at 0.42 when 0.03 ahead of "none"'s. For the
attribute sentences: how many got their attribute, none ("missed"), or another ("wrong"); for the "none" sentences,
how many were kept unknown; and for the safety sentences, how many got a safety attribute. The embeddings are those
of the local int8 MiniLM the product computes with.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the project root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import numpy.typing as npt

from agent.adapters.local_embedder import LocalEmbedder
from agent.memory import attributes
from bench import machine

NEAREST, NEAREST_THRESHOLD, NEAREST_MARGIN = 3, 0.42, 0.03
Classify = Callable[[npt.NDArray[np.float32], npt.NDArray[np.intp], npt.NDArray[np.float32], list[str]],
                    list[str | None]]


def nearest_examples(train: npt.NDArray[np.float32], labels: npt.NDArray[np.intp], test: npt.NDArray[np.float32],
                     names: list[str]) -> list[str | None]:
    """The former rule: the attribute whose three nearest examples are closest on average, above the threshold
    and ahead of "none"."""
    similarities = test @ train.T
    none = names.index(attributes.NONE)
    out: list[str | None] = []
    for row in similarities:
        means = np.full(len(names), -np.inf)
        for label in range(len(names)):
            near = row[labels == label]
            if len(near):
                means[label] = np.sort(near)[-NEAREST:].mean()
        against, means[none] = means[none], -np.inf
        best = int(np.argmax(means))
        out.append(names[best] if means[best] >= NEAREST_THRESHOLD and means[best] >= against + NEAREST_MARGIN
                   else None)
    return out


def head(classifier: attributes.Attributes) -> Classify:
    """The product's classifier, trained on each fold's training sentences."""

    def classify(train: npt.NDArray[np.float32], labels: npt.NDArray[np.intp], test: npt.NDArray[np.float32],
                 names: list[str]) -> list[str | None]:
        classifier.use(attributes.train(train, labels.tolist(), names))
        return [reading.attribute if reading else None for reading in classifier.classify(test.tolist())]

    return classify


def score(named: list[str | None], truth: list[str]) -> dict[str, float]:
    pairs = list(zip(named, truth, strict=True))
    about = [(got, want) for got, want in pairs if want != attributes.NONE]
    none = [got for got, want in pairs if want == attributes.NONE]
    safety = [got for got, want in about if want in attributes.SAFETY]
    return {"right": sum(got == want for got, want in about) / len(about),
            "missed": sum(got is None for got, _ in about) / len(about),
            "wrong": sum(got is not None and got != want for got, want in about) / len(about),
            "none_kept_unknown": sum(got is None for got in none) / len(none),
            "safety_named_safety": sum(got in attributes.SAFETY for got in safety) / len(safety)}


def run(folds: int) -> dict[str, Any]:
    labelled = attributes.examples()
    names = list(labelled)
    texts = [text for group in labelled.values() for text in group]
    truth = [name for name, group in labelled.items() for _ in group]
    labels = np.asarray([names.index(name) for name in truth])
    embedder = LocalEmbedder()
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    classifiers: dict[str, Classify] = {
        "head": head(attributes.Attributes(embedder, attributes.PROBABILITY["local"])),
        "nearest examples": nearest_examples}
    fold = np.random.default_rng(0).integers(0, folds, len(texts))
    results: dict[str, list[str | None]] = {"head": [None] * len(texts), "nearest examples": [None] * len(texts)}
    for k in range(folds):
        train, test = fold != k, np.flatnonzero(fold == k)
        for name, classify in classifiers.items():
            for row, got in zip(test, classify(vectors[train], labels[train], vectors[test], names), strict=True):
                results[name][row] = got
    return {"sentences": len(texts), "attributes": len(names) - 1, "folds": folds,
            **{name: score(named, truth) for name, named in results.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.folds)
    if args.json:
        print(json.dumps({"machine": machine.describe(), **result}, indent=2))
        return 0
    print(f"machine: {machine.line()}")
    print(f"{result['sentences']} sentences, {result['attributes']} attributes and none, {result['folds']} folds")
    for name in ("head", "nearest examples"):
        figures = "  ".join(f"{key} {value:.3f}" for key, value in result[name].items())
        print(f"{name:18s} {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
