"""Prompts are text files, read once per process: they are edited as prose, not as Python.

Their one copy is the checkout's top-level ``prompts/``. A wheel carries them as package data in
``agent/prompt_files/`` (pyproject maps that package to ``prompts/``), read through ``importlib.resources``; an
editable install or a source tree has no such package and reads ``prompts/`` itself.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable

from agent.config import PROJECT_ROOT
from agent.errors import ConfigError


def prompt_file(name: str) -> Traversable:
    """Where ``<name>.md`` is read from: the installed package data if there is any, else the checkout's file."""
    packaged = resources.files("agent").joinpath("prompt_files", f"{name}.md")
    return packaged if packaged.is_file() else PROJECT_ROOT / "prompts" / f"{name}.md"


@functools.cache
def prompt(name: str) -> str:
    """The text of the prompt ``<name>.md``, without trailing whitespace."""
    path = prompt_file(name)
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"The prompt file {path} cannot be read ({exc.strerror}): reinstall the agent.") from exc
