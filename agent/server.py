"""What the model server told us about itself, and what the chat makes of it: where the system prompt goes, how
much context a request may take, and which model name to show.

Why this exists: local servers differ in ways the OpenAI API does not describe. Many chat templates have no system
role (Gemma's among them): llama-cpp-python's ``gemma`` format drops system messages, so a memory block sent in one
never reaches the model. A server's context is often 2,048-8,192 tokens, less than the agent's default budget plus
a reply. And llama-cpp-python names its model by file path whatever the request asked for. The facts come from the
server where it publishes them (``/v1/models``; llama.cpp's ``/props`` with its chat template and ``n_ctx``;
Ollama's ``/api/show``) through ``agent.adapters.server_probe``; everything here is pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

Where = Literal["system", "user"]
PLACEMENTS = ("auto", "system", "user")
# Model families whose chat templates have no system role (the template drops it or refuses it): Gemma's, and the
# Mistral 7B / Mixtral instruct templates (llama-cpp-python's ``mistral-instruct`` format drops it too).
_NO_SYSTEM_ROLE = re.compile(r"gemma|mistral-7b|mixtral", re.IGNORECASE)
# What llama.cpp's ``/props`` publishes for a built-in template (``--chat-template gemma``, ``chatml``): its name.
_TEMPLATE_NAME = re.compile(r"[\w.-]+")
# How far our token count (o200k) may fall short of a local model's own tokenizer: counts are scaled by this.
TOKENIZER_SLACK = 1.25


@dataclass(frozen=True)
class ServerInfo:
    """What a probe of the server found. ``kind`` is ``llama.cpp``, ``ollama``, ``vllm`` or ``openai-compatible``;
    ``context`` the tokens one request may hold (prompt and reply), where the server publishes it; ``template``
    its chat template, where it publishes one; ``error`` why ``/v1/models`` could not be read, and ``unreachable``
    whether that was because nothing answered at all."""

    kind: str = "openai-compatible"
    models: tuple[str, ...] = ()
    context: int | None = None
    template: str | None = None
    error: str | None = None
    unreachable: bool = False


@dataclass(frozen=True)
class Placement:
    """Where the system prompt, the memory block and the summary go, and why (for ``/why`` and the doctor)."""

    where: Where
    why: str

    def describe(self) -> str:
        place = "the system message" if self.where == "system" else "the first user message"
        return f"{place} ({self.why})"


def served_name(info: ServerInfo, configured: str) -> str:
    """The model the server says it serves: the configured one if it is listed, else the only one listed (a file
    path shows as its file name); the configured name when the server lists none or several others."""
    if configured in info.models or len(info.models) != 1:
        return configured
    return PurePosixPath(info.models[0]).name or info.models[0]


def template_has_system_role(template: str) -> bool | None:
    """Whether the chat template a server published has a system role: its source mentions one. None when what
    it published is only the name of a built-in template: a name tells the family (``gemma``), not the source."""
    if _TEMPLATE_NAME.fullmatch(template.strip()):
        return None
    return "system" in template.lower()


def choose_placement(setting: str, info: ServerInfo, model: str) -> Placement:
    """``system`` or ``user`` as set; for ``auto``, folded into the user message when the server's chat template
    never mentions a system role, or when the template's name or the model (asked for, or served) belongs to a
    family without one."""
    if setting in ("system", "user"):
        return Placement("system" if setting == "system" else "user", f"AGENT_SYSTEM_PROMPT={setting}")
    if info.template is not None:
        has_role = template_has_system_role(info.template)
        if has_role:
            return Placement("system", "the server's chat template has a system role")
        if has_role is False or _NO_SYSTEM_ROLE.search(info.template):
            return Placement("user", "the server's chat template has no system role")
    for name in (model, *info.models):
        if _NO_SYSTEM_ROLE.search(name):
            return Placement("user", f"{PurePosixPath(name).name}: its chat template has no system role")
    return Placement("system", "the default; set AGENT_SYSTEM_PROMPT=user if the model ignores it")


def request_limit(context: int | None, max_tokens: int) -> int | None:
    """Tokens (as we count them) a request may hold so that it and a reply of ``max_tokens`` fit ``context``."""
    if context is None:
        return None
    return max(int((context - max_tokens) / TOKENIZER_SLACK), 0)


_CONTEXT_NUMBER = re.compile(r"(?:context(?: length| window| size)?(?: is| of)?|n_ctx\W{0,4})\D{0,20}?(\d+)",
                             re.IGNORECASE)


def context_from_error(text: str) -> int | None:
    """The context size named in a server's "too long" error ("maximum context length is 4096 tokens",
    "exceed context window of 2048", ``"n_ctx": 4096``), if it names one."""
    match = _CONTEXT_NUMBER.search(text)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class ServerProfile:
    """What the chat adopts from a probe: the placement, the model name to show, and the tokens a request may
    hold (None: the server publishes no context size)."""

    info: ServerInfo
    placement: Placement
    model: str
    limit: int | None


def server_profile(info: ServerInfo, *, model: str, system_prompt: str, max_tokens: int) -> ServerProfile:
    return ServerProfile(info, choose_placement(system_prompt, info, model), served_name(info, model),
                         request_limit(info.context, max_tokens))
