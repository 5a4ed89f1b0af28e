"""The attribute classifier's trained head, kept in the model cache so that no start embeds its examples again.

Training the head means embedding 2,200 labelled sentences and 150 steps over them: 5 s on a quiet machine, 25 s on
a loaded one, on the memory thread of every new process, before its first write can be read for meaning. The head
is 70 KB; it is kept as ``attributes-<key>.npz`` beside the converted model (``XDG_CACHE_HOME/agent``), under the
key ``agent.memory.attributes.Attributes.key`` gives it (the model, the examples, the training's constants), so a
new example or another model trains a new one. Written whole and privately (``write_private``), read without
pickles; a file that will not load, or holds other shapes, is removed and the head trained again.
"""

from __future__ import annotations

import io
import logging
import zipfile
from pathlib import Path

import numpy as np

from agent.adapters.local_model import default_cache_dir, discard
from agent.files import read_regular, write_private
from agent.memory.attributes import Head

log = logging.getLogger(__name__)


class HeadFiles:
    """``agent.memory.attributes.HeadStore`` over files in ``directory`` (the model cache by default)."""

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory

    def _path(self, key: str) -> Path:
        return (self._directory or default_cache_dir()) / f"attributes-{key[:32]}.npz"

    def load(self, key: str) -> Head | None:
        path = self._path(key)
        try:
            data = read_regular(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.debug("could not read %s: %s", path, exc)
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                weights, bias, names = arrays["weights"], arrays["bias"], tuple(str(n) for n in arrays["names"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            log.debug("%s would not load (%s): training the head again", path, exc)
            discard(path)
            return None
        if weights.ndim != 2 or weights.shape[1] != len(names) or bias.shape != (len(names),):
            log.debug("%s holds a head of other shapes: training it again", path)
            discard(path)
            return None
        return Head(weights.astype(np.float32), bias.astype(np.float32), names)

    def save(self, key: str, head: Head) -> None:
        path = self._path(key)
        buffer = io.BytesIO()
        np.savez(buffer, weights=head.weights, bias=head.bias, names=np.asarray(head.names, dtype=str))
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_private(path, buffer.getvalue(), f".{path.name}")
        except OSError as exc:  # a read-only cache: the next process trains again
            log.debug("could not keep the head in %s: %s", path, exc)
