"""The packaged MiniLM file, converted once into a model that onnxruntime runs in int8, and kept in the user's cache.

Why: the packaged ``model.onnx`` stores int8 weights that its graph casts back to float32 on every run. onnxruntime
folds those casts when it loads the file, so the session holds the float32 weights and their prepacked copies
(160-180 MB of resident memory) and computes in float32. Folding the casts here and quantizing the weights again with
onnxruntime's dynamic quantization (int8 per output channel, activations quantized per batch) gives a session of about
50 MB that embeds 1.7x faster. The vectors agree with the packaged model's to a cosine of 0.99 on average (0.98 at
worst), and LoCoMo recall is the same to a point (``bench/RESULTS.md``), so a store built by either file is one vector
space.

The conversion (2-3 s, a few hundred MB at its peak) runs once per source file in a child process, so the chat process
never holds the float32 copy; its result is cached under ``$XDG_CACHE_HOME/agent`` (``~/.cache/agent``), named by the
source's SHA-256 and the onnxruntime version. If anything goes wrong the packaged file is used as it is: slower and
bigger, but the same space.

Two costs of every start are paid at the conversion instead. The cached file is the graph onnxruntime's extended
optimizations make of the quantized model (the fused integer products and layer norms it would otherwise build at each
load, portable across CPUs, unlike the layout ones): a session opens in 0.04 CPU-s instead of 0.09, and computes the
same vectors to the bit. And the source's digest is noted in ``sources.json`` beside the cache, with the size, times
and inode it had, so the 23 MB file is hashed once per version of it, not at each start (20-60 ms).

The cached file is used only if it is the file the conversion wrote: a file overwritten in place (same size) loaded
silently before and gave some words vectors at a cosine of 0.26-0.47 of the right ones. Its SHA-256 is noted when it is
written, with its size, times and inode, and a start uses it at once while these are unchanged. Any write to a file
moves its change time (``st_ctime``), which no one but the clock sets, so an overwrite in place is caught without
reading the file; a file whose identity moved (copied, restored from a backup, touched) is hashed once and used if its
bytes are the ones noted. Anything else (other bytes, no note at all) is removed and converted again from the packaged
model. Hashing it at every start instead would cost 46-57 ms of CPU here (140-240 ms on the loaded machine, for 22.8
MB), more than opening the session it guards.

Run as ``python -m agent.adapters.local_model SOURCE TARGET`` to convert one file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, TypeGuard

from agent.files import read_regular, write_private

log = logging.getLogger(__name__)

#: Part of the cached file's name: change it when the conversion changes, so old caches are not reused.
CONVERSION = "dyn-int8-opt-v2"
CONVERT_TIMEOUT_S = 300.0
#: The file beside the cache that notes the digest of each source hashed (by its path) and of each file converted (by
#: its name in the cache): key -> [size, mtime, ctime, inode, digest].
DIGESTS = "sources.json"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent"


def cached_model_path(source: Path, cache_dir: Path) -> Path:
    """Where the conversion of ``source`` is cached: named by its bytes and by the onnxruntime that optimized it (a
    graph optimized by one version is not promised to load in another)."""
    import onnxruntime

    digest = source_digest(source, cache_dir)[:16]
    return cache_dir / f"{source.stem}-{digest}-{CONVERSION}-ort{onnxruntime.__version__}.onnx"


def source_digest(source: Path, cache_dir: Path) -> str:
    """The SHA-256 of ``source``, from ``sources.json`` while the file has the size, times and inode noted with it
    there; else hashed and noted. A note that cannot be read or written only costs the hashing."""
    key = str(source.resolve())
    identity, notes = _identity(source), _notes(cache_dir)
    noted = notes.get(key)
    if _valid(noted) and noted[:-1] == identity:
        return str(noted[-1])
    digest = _sha256(source)
    _note(cache_dir, notes, key, [*identity, digest])
    return digest


def note_converted(target: Path, cache_dir: Path) -> None:
    """Note the digest and identity of the file the conversion just wrote, which ``converted_intact`` checks."""
    _note(cache_dir, _notes(cache_dir), target.name, [*_identity(target), _sha256(target)])


def converted_intact(target: Path, cache_dir: Path) -> bool:
    """Whether ``target`` is the file the conversion wrote: its identity as noted (no read), or else its bytes hash to
    the digest noted (and the new identity is noted). Noted by name, so a cache moved whole costs a hash, not a
    conversion; a file never noted is not known to be ours."""
    notes = _notes(cache_dir)
    noted = notes.get(target.name)
    if not _valid(noted):
        return False
    identity = _identity(target)
    if noted[:-1] == identity:
        return True
    if _sha256(target) != noted[-1]:
        return False
    _note(cache_dir, notes, target.name, [*identity, noted[-1]])
    return True


def _identity(path: Path) -> list[int]:
    """What changes whenever the file does: any write moves ``st_ctime``, which only the clock sets."""
    seen = path.stat()
    return [seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns, seen.st_ino]


def _valid(noted: object) -> TypeGuard[list[Any]]:
    return isinstance(noted, list) and len(noted) == 5 and isinstance(noted[-1], str)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _notes(cache_dir: Path) -> dict[str, Any]:
    try:
        notes = json.loads(read_regular(cache_dir / DIGESTS))
    except (OSError, ValueError):
        return {}
    return notes if isinstance(notes, dict) else {}


def _note(cache_dir: Path, notes: dict[str, Any], key: str, entry: list[Any]) -> None:
    notes[key] = entry
    try:
        cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(cache_dir / DIGESTS, json.dumps(notes, indent=1).encode(), f".{DIGESTS}")
    except OSError as exc:
        log.debug("could not note the digest of %s in %s: %s", key, cache_dir / DIGESTS, exc)


def prepared_model(source: Path, cache_dir: Path | None = None) -> Path:
    """The int8 conversion of ``source`` from the cache, made first if missing or not the file the conversion wrote
    (``converted_intact``); ``source`` itself if that fails."""
    try:
        cache = cache_dir or default_cache_dir()
        target = cached_model_path(source, cache)
        if target.is_file():
            if converted_intact(target, cache):
                return target
            log.debug("%s is not the file the conversion wrote: converting %s again", target, source)
            discard(target)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(source), str(target)],
            capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S, check=False,
        )
        if done.returncode != 0 or not target.is_file():
            detail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            log.debug("converting %s failed: %s; using it as it is", source, detail[0])
            return source
        note_converted(target, cache)
        return target
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # RuntimeError: no home directory
        log.debug("converting %s failed: %s; using it as it is", source, exc)
        return source


def discard(path: Path) -> None:
    """Remove a cached file that would not load, so the next start converts it again."""
    try:
        path.unlink()
    except OSError as exc:
        log.debug("could not remove %s: %s", path, exc)


def fold_weight_casts(graph: Any) -> int:
    """Replace each ``Mul(Cast(int8 weight), scale)`` of constants by its float32 result; return how many.

    This is what onnxruntime's constant folding does at every load; done once here, the float32 weights can be
    quantized for integer matrix products instead.
    """
    from onnx import numpy_helper

    constants = {init.name: init for init in graph.initializer}
    readers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    folded, dropped = [], []
    for cast in graph.node:
        if cast.op_type != "Cast" or cast.input[0] not in constants:
            continue
        users = readers.get(cast.output[0], [])
        if len(users) != 1 or users[0].op_type != "Mul":
            continue
        mul = users[0]
        scale = next((name for name in mul.input if name != cast.output[0]), "")
        if scale not in constants:
            continue
        weight = numpy_helper.to_array(constants[cast.input[0]]).astype("float32")
        value = weight * numpy_helper.to_array(constants[scale]).astype("float32")
        folded.append(numpy_helper.from_array(value.astype("float32"), mul.output[0]))
        dropped += [cast, mul]
    for node in dropped:
        graph.node.remove(node)
    graph.initializer.extend(folded)
    still_read = {name for node in graph.node for name in node.input}
    for init in list(graph.initializer):
        if init.name not in still_read:
            graph.initializer.remove(init)
    return len(folded)


class _DropAdvice(logging.Filter):
    """onnxruntime's quantizer logs advice on the root logger; it means nothing to the user of a chat."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def convert(source: Path, target: Path) -> None:
    """Write the dynamically quantized version of ``source`` to ``target`` atomically, as the graph onnxruntime's
    extended optimizations make of it."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(source))
    if fold_weight_casts(model.graph) == 0:
        raise ValueError(f"{source} has no int8 weights stored behind casts: nothing to convert")
    quantized, optimized = (_temp_beside(target) for _ in range(2))
    advice = _DropAdvice()
    logging.getLogger().addFilter(advice)
    try:
        quantize_dynamic(model, quantized, weight_type=QuantType.QInt8, per_channel=True)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = optimized
        options.log_severity_level = 3
        ort.InferenceSession(quantized, options, providers=["CPUExecutionProvider"])
        os.replace(optimized, target)
    finally:
        logging.getLogger().removeFilter(advice)
        for tmp in (quantized, optimized):
            if os.path.exists(tmp):
                os.unlink(tmp)


def _temp_beside(target: Path) -> str:
    handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)
    return tmp


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m agent.adapters.local_model SOURCE TARGET", file=sys.stderr)
        return 2
    try:
        convert(Path(argv[0]), Path(argv[1]))
    except Exception as exc:  # onnx and the quantizer raise many kinds; the parent only needs one line
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
