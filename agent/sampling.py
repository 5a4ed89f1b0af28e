"""Request options for one run: ``--temperature 0.2`` and ``-o NAME=VALUE`` (as ``llm -o`` takes them), checked here
and passed through to every request of the run as the OpenAI API names them.

Only options whose meaning and range the OpenAI API documents are taken, each checked against that range before
anything is sent: a typo (``-o temprature=0.2``) or a value out of range is one line naming what is allowed, not
a request the server refuses or, worse, silently ignores. The reply's length is the setting ``AGENT_MAX_TOKENS``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.config import Bounds
from agent.errors import UsageError

# Each option the run passes on, with the range the OpenAI API documents for it.
OPTIONS: dict[str, Bounds] = {
    "temperature": Bounds(0, 2, whole=False),
    "top_p": Bounds(0, 1, whole=False),
    "presence_penalty": Bounds(-2, 2, whole=False),
    "frequency_penalty": Bounds(-2, 2, whole=False),
    "seed": Bounds(0, 2**63 - 1),
}
Sampling = tuple[tuple[str, float], ...]


def known() -> str:
    return ", ".join(f"{name} ({bounds})" for name, bounds in OPTIONS.items())


def option(given: str) -> tuple[str, float]:
    """``NAME=VALUE`` as a checked option; ``UsageError`` saying what is allowed otherwise."""
    name, sep, raw = given.partition("=")
    name = name.strip().lower().replace("-", "_")
    if not sep or not name:
        raise UsageError(f"-o {given!r} is not NAME=VALUE (e.g. -o temperature=0.2).")
    if name == "max_tokens":
        raise UsageError("-o max_tokens: the reply's length is the setting AGENT_MAX_TOKENS (e.g. "
                         "AGENT_MAX_TOKENS=200 agent ...).")
    if name not in OPTIONS:
        raise UsageError(f"-o {name}: agent passes on only these options: {known()}.")
    bounds = OPTIONS[name]
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if value not in bounds:
        raise UsageError(f"-o {name}={raw.strip()!r} is not valid: expected {bounds}.")
    return name, int(value) if bounds.whole else value


def sampling(options: Sequence[str], temperature: float | None = None) -> Sampling:
    """The options of a run, from its ``-o`` flags and ``--temperature``; an option given twice is refused."""
    given = [*options, *([] if temperature is None else [f"temperature={temperature}"])]
    chosen: dict[str, float] = {}
    for name, value in map(option, given):
        if name in chosen:
            raise UsageError(f"{name} is given twice (--temperature is -o temperature=...): give it once.")
        chosen[name] = value
    return tuple(chosen.items())
