"""The cached int8 conversion is used only if it is the file the conversion wrote (issue 19, item 11). Before, a
cached file overwritten in place (same size) loaded silently and gave some words vectors at a cosine of 0.26-0.47 of
the right ones; now it is converted again from the packaged model, and an intact cache is still used without being
hashed at each start. Each test works on a cache of its own (a copy of the run's, or a fresh one), never the run's."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from agent.adapters import local_model
from agent.adapters.local_embedder import LocalEmbedder
from agent.adapters.local_model import CONVERSION, DIGESTS

SENTENCES = ["I can't eat peanuts, they make me very sick.", "My sister moved to Berlin last spring.",
             "We are planning a trip to Japan with friends from college."]


def copied_cache(model_cache: Path, tmp_path: Path) -> Path:
    """A copy of the run's cache (its converted file and its notes), as a backup restored elsewhere would be."""
    cache = tmp_path / "cache"
    shutil.copytree(model_cache / "agent", cache)
    return cache


def converted(cache: Path) -> Path:
    (found,) = cache.glob(f"*-{CONVERSION}-ort*.onnx")
    return found


def conversions(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The conversions run from now on (each a child process)."""
    runs: list[list[str]] = []
    real = subprocess.run

    def counted(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        runs.append(args)
        return real(args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(local_model.subprocess, "run", counted)
    return runs


def close(vectors: list[list[float]], expected: list[list[float]]) -> float:
    return float((np.array(vectors) * np.array(expected)).sum(axis=1).min())


def test_a_cached_file_overwritten_in_place_is_converted_again_from_the_packaged_model(
    local_embedder: LocalEmbedder, model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = local_embedder.embed(SENTENCES)
    cache = copied_cache(model_cache, tmp_path)
    target = converted(cache)
    good = target.read_bytes()
    seen = target.stat()
    with target.open("r+b") as handle:  # 2 MB of weights zeroed, the size kept, the times put back
        handle.seek(len(good) // 2)
        handle.write(bytes(2 << 20))
    os.utime(target, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert target.stat().st_size == len(good)

    runs = conversions(monkeypatch)
    vectors = LocalEmbedder(cache_dir=cache).embed(SENTENCES)

    assert len(runs) == 1, "converted again"
    assert bytes(2 << 20) not in target.read_bytes(), "the damaged file is gone"
    assert close(vectors, expected) > 0.999


def test_an_intact_cache_moved_elsewhere_is_hashed_once_then_used_as_it_is(
    local_embedder: LocalEmbedder, model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = local_embedder.embed(SENTENCES)
    cache = copied_cache(model_cache, tmp_path)  # new inodes and times: its bytes are checked once
    runs = conversions(monkeypatch)
    assert close(LocalEmbedder(cache_dir=cache).embed(SENTENCES), expected) > 0.9999
    assert runs == []

    def no_hashing(*args: object) -> None:
        raise AssertionError("hashed at a start whose cache had not changed")

    monkeypatch.setattr(local_model.hashlib, "sha256", no_hashing)
    assert close(LocalEmbedder(cache_dir=cache).embed(SENTENCES), expected) > 0.9999
    assert runs == []


def test_a_cached_file_nothing_vouches_for_is_converted_again(
    local_embedder: LocalEmbedder, model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No note of what the conversion wrote (a cache of an older version, the notes lost): its bytes are not known
    to be the conversion's, so it is made again."""
    cache = copied_cache(model_cache, tmp_path)
    (cache / DIGESTS).unlink()
    runs = conversions(monkeypatch)
    assert close(LocalEmbedder(cache_dir=cache).embed(SENTENCES), local_embedder.embed(SENTENCES)) > 0.999
    assert len(runs) == 1
    assert converted(cache).name in (cache / DIGESTS).read_text()
