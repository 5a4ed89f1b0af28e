"""No heap bytes in the HNSW files: hnswlib writes its ``malloc``'d room past the last element into
``data_level0.bin`` and ``length.bin``, and in the agent's process that room held the user's words. Found in a full
test run (a forgotten line's word in ``length.bin`` after forget) and reproduced here in a process of its own,
because what the heap holds is the process's: threads that held the words free them, and the index's files
created next hold them, unless the unused bytes are zeroed (``chroma_files.clear_slack``)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from agent.adapters import chroma_files
from agent.adapters.chroma_index import ChromaIndex, forget_clients, open_client

WORDS = "my safe combination is QUOKKA-Vx72 behind the painting"
NEEDLES = (b"quokka", b"vx72", b"painting")

# Threads of a chat (the terminal reader, the model's HTTP client, the embedder's pool) hold the user's words in
# buffers of the C heap and free them; the process then writes and deletes vectors through the index, and exits.
CHILD = """
import random, sys, threading
from pathlib import Path

import pytest
from agent.adapters.chroma_index import ChromaIndex, open_client

def chat():
    held = [f"{n:06d} {sys.argv[2]} " * (n // 40 + 1) for n in range(500, 60000, 113)]
    del held

threads = [threading.Thread(target=chat) for _ in range(16)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
root = Path(sys.argv[1])
index = ChromaIndex(open_client(root, None), "default", str(root))
rng = random.Random(7)
index.upsert([f"m{i}" for i in range(5)], [[rng.random() for _ in range(384)] for _ in range(5)])
index.delete(["m1"])
"""


def leaks(root: Path) -> list[str]:
    return [str(f) for f in root.rglob("*") if f.is_file() and any(n in f.read_bytes().lower() for n in NEEDLES)]


def vectors(n: int) -> list[list[float]]:
    rng = random.Random(n)
    return [[rng.random() for _ in range(384)] for _ in range(n)]


def plant(segment: Path) -> None:
    """Put the words past the elements, where the heap bytes of the segment's creation lie."""
    for name, used in chroma_files.element_bytes(segment / "header.bin").items():
        with open(segment / name, "r+b") as f:
            f.seek(used + 8)
            f.write(WORDS.encode() * 3)


def test_words_the_process_held_are_not_in_the_index_files_it_wrote(tmp_path: Path) -> None:
    root = tmp_path / "chroma"
    child = subprocess.run([sys.executable, "-c", CHILD, str(root), WORDS], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, child.stderr
    assert list(root.glob("*/data_level0.bin")), "the child wrote an HNSW segment"
    assert leaks(root) == []
    index = ChromaIndex(open_client(root, None), "default", str(root))
    assert index.ids() == {"m0", "m2", "m3", "m4"}


def test_bytes_left_past_the_elements_are_zeroed_at_open_and_the_index_still_answers(tmp_path: Path) -> None:
    """What a killed process or an older agent left: heap bytes past the elements. The next open zeroes them, and
    the index keeps every vector and takes new ones in the room that held them."""
    root = tmp_path / "chroma"
    stored = vectors(6)
    ChromaIndex(open_client(root, None), "default", str(root)).upsert([f"m{i}" for i in range(6)], stored)
    forget_clients()
    [header] = root.glob("*/header.bin")
    segment, used_by = header.parent, chroma_files.element_bytes(header)
    assert set(used_by) == {"length.bin", "data_level0.bin"}
    plant(segment)
    before = {name: (segment / name).read_bytes() for name in ("length.bin", "data_level0.bin")}
    assert len(leaks(root)) == 2

    index = ChromaIndex(open_client(root, None), "default", str(root))

    assert leaks(root) == []
    for name, used in used_by.items():
        after = (segment / name).read_bytes()
        assert after[:used] == before[name][:used] and len(after) == len(before[name]), f"{name}: elements kept"
        assert after[used:] == bytes(len(after) - used)
    assert [index.query(v, 1)[0].id for v in stored] == [f"m{i}" for i in range(6)]
    index.upsert(["n0", "n1", "n2"], vectors(3))
    forget_clients()
    chroma_files.check_hnsw(root)
    index = ChromaIndex(open_client(root, None), "default", str(root))
    assert index.count() == 9 and [index.query(v, 1)[0].id for v in vectors(3)] == ["n0", "n1", "n2"]


def test_a_write_or_delete_zeroes_them_in_a_running_process_and_the_index_keeps_working(tmp_path: Path) -> None:
    """A chat that forgets does not wait for its exit: the bytes go with the delete (or the write that created the
    segment), while Chroma has the files open."""
    root = tmp_path / "chroma"
    stored = vectors(6)
    index = ChromaIndex(open_client(root, None), "default", str(root))
    index.upsert([f"m{i}" for i in range(6)], stored)
    [header] = root.glob("*/header.bin")
    plant(header.parent)
    assert len(leaks(root)) == 2

    index.delete(["m1"])

    assert leaks(root) == []
    plant(header.parent)
    index.upsert(["n0", "n1", "n2"], vectors(3))
    assert leaks(root) == [], "and with a write"
    assert [index.query(v, 1)[0].id for v in [*stored[:1], *stored[2:]]] == ["m0", "m2", "m3", "m4", "m5"]
    forget_clients()
    chroma_files.check_hnsw(root)
    index = ChromaIndex(open_client(root, None), "default", str(root))
    assert index.count() == 8 and [index.query(v, 1)[0].id for v in vectors(3)] == ["n0", "n1", "n2"]


def test_a_symlinked_segment_file_is_not_followed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "chroma"
    ChromaIndex(open_client(root, None), "default", str(root)).upsert(["m0"], vectors(1))
    forget_clients()
    [header] = root.glob("*/header.bin")
    length = header.parent / "length.bin"
    outside = tmp_path / "outside.bin"
    outside.write_bytes(length.read_bytes()[:4] + WORDS.encode())
    length.unlink()
    length.symlink_to(outside)
    chroma_files.clear_slack(root)
    assert WORDS.encode() in outside.read_bytes() and length.is_symlink()
    assert "Could not clear the unused bytes" in caplog.text


def test_the_first_read_after_an_open_zeroes_what_loading_the_segment_wrote(tmp_path: Path) -> None:
    """Loading a segment writes its files again, the room past its elements from this process's heap: a store
    reopened and only read (a chat's first recall, the open's own count) left 11 KB of it, once with an API key in
    it (``test_file_privacy.py``), until the next write or close."""
    store = tmp_path / "chroma"
    index = ChromaIndex(open_client(store, None), "default", str(store))
    index.upsert(["a"], [[0.1] * 8])
    forget_clients()
    reopened = ChromaIndex(open_client(store, None), "default", str(store))
    assert reopened.count() == 1
    [header] = store.glob("*/header.bin")
    for name, used in chroma_files.element_bytes(header).items():
        assert not any((header.parent / name).read_bytes()[used:]), f"{name} holds heap bytes past its elements"
