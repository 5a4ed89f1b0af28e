"""Prompts are text files in ``prompts/``, read once per process: they are edited as prose, not as Python."""

from __future__ import annotations

import functools

from agent.config import PROMPTS_DIR
from agent.errors import ConfigError


@functools.cache
def prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``, without trailing whitespace."""
    path = PROMPTS_DIR / f"{name}.md"
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"The prompt file {path} cannot be read ({exc.strerror}): reinstall the agent.") from exc
