"""Settings: typed, immutable, read in one place with the precedence flag > environment > ``.env`` > default.

Every setting is declared once in ``SPECS`` with its environment variable, default and help text; the same table
drives ``.env.example``, ``agent config`` (which shows where each value came from) and the parsing here. The API
key is a setting like any other but is never shown: ``describe`` masks it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from agent.errors import UsageError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / "agent_memory_db"
PROMPTS_DIR = PROJECT_ROOT / "prompts"


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"expected true or false, got {raw!r}")


def _optional_float(raw: str) -> float | None:
    return float(raw) if raw.strip() else None


def _optional_str(raw: str) -> str | None:
    return raw.strip() or None


def _optional_path(raw: str) -> Path | None:
    return Path(raw).expanduser() if raw.strip() else None


def _embedder(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"auto", "local", "openai"}:
        raise ValueError(f"expected auto, local or openai, got {raw!r}")
    return value


def _placement(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"auto", "system", "user"}:
        raise ValueError(f"expected auto, system or user, got {raw!r}")
    return value


@dataclass(frozen=True)
class Spec:
    """One setting: its field name, environment variable(s), parser, default and one line of help."""

    field: str
    env: tuple[str, ...]
    parse: Callable[[str], Any]
    default: Any
    help: str
    secret: bool = False


SPECS: tuple[Spec, ...] = (
    Spec("api_key", ("OPENAI_API_KEY",), _optional_str, None,
         "OpenAI API key. Not needed for a server on localhost.", secret=True),
    Spec("base_url", ("OPENAI_BASE_URL", "OPENAI_API_BASE"), _optional_str, None,
         "OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama."),
    Spec("model", ("AGENT_MODEL",), str, "gpt-4o-mini", "Chat model name."),
    Spec("data_dir", ("AGENT_DATA_DIR",), lambda raw: Path(raw).expanduser(), DEFAULT_DATA_DIR,
         "Directory for memories, sessions and history (created 0700)."),
    Spec("user", ("AGENT_USER",), str, "default", "Whose memories these are; each user has a separate store."),
    Spec("embedder", ("AGENT_EMBEDDER",), _embedder, "auto",
         "auto (openai when a key is set, else local), local (offline MiniLM) or openai."),
    Spec("embedding_model", ("AGENT_EMBEDDING_MODEL",), str, "text-embedding-3-small",
         "Embedding model name for the openai embedder."),
    Spec("local_model_dir", ("AGENT_LOCAL_MODEL_DIR",), _optional_path, None,
         "Directory holding model.onnx and tokenizer.json to use instead of the packaged MiniLM."),
    Spec("memory_k", ("AGENT_MEMORY_K",), int, 5, "How many memories at most are injected per turn."),
    Spec("memory_threshold", ("AGENT_MEMORY_THRESHOLD",), _optional_float, None,
         "Minimum similarity for a memory to be injected (empty: the embedder's calibrated default)."),
    Spec("memory_tokens", ("AGENT_MEMORY_TOKENS",), int, 800, "Token budget of the memory block."),
    Spec("memory_capacity", ("AGENT_MEMORY_CAPACITY",), int, 10_000,
         "Memories kept per user; the least recently seen are evicted past it."),
    Spec("memory_writes_per_session", ("AGENT_MEMORY_WRITES_PER_SESSION",), int, 50,
         "Cap on memory writes in one session (a guard against gradual poisoning)."),
    Spec("llm_extract", ("AGENT_LLM_EXTRACT",), _bool, False,
         "Also ask the chat model to extract up to two standalone facts per turn."),
    Spec("grounding_threshold", ("AGENT_GROUNDING_THRESHOLD",), _optional_float, None,
         "Minimum similarity of an extracted fact to its source turn (empty: the embedder's default)."),
    Spec("context_tokens", ("AGENT_CONTEXT_TOKENS",), int, 6_000,
         "Token budget of the short-term message list; older turns fold into a summary."),
    Spec("max_tokens", ("AGENT_MAX_TOKENS",), int, 1024,
         "Longest reply, in tokens (sent as max_tokens; 0 sends none and lets the server decide)."),
    Spec("system_prompt", ("AGENT_SYSTEM_PROMPT",), _placement, "auto",
         "Where the system prompt, memory and summary go: system (a system message), user (folded into the first "
         "user message, for chat templates without a system role) or auto (from the server's template or model)."),
    Spec("chroma_url", ("AGENT_CHROMA_URL",), _optional_str, None,
         "Use a Chroma server (e.g. http://127.0.0.1:8000) instead of the embedded store."),
    Spec("timeout", ("AGENT_TIMEOUT",), float, 60.0, "Seconds before a model request times out."),
    Spec("max_retries", ("AGENT_MAX_RETRIES",), int, 3, "Retries for 429, 5xx and timeouts."),
)


@dataclass(frozen=True)
class Settings:
    """The effective settings of one run. Field docs live in ``SPECS``."""

    api_key: str | None = None
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    data_dir: Path = DEFAULT_DATA_DIR
    user: str = "default"
    embedder: str = "auto"
    embedding_model: str = "text-embedding-3-small"
    local_model_dir: Path | None = None
    memory_k: int = 5
    memory_threshold: float | None = None
    memory_tokens: int = 800
    memory_capacity: int = 10_000
    memory_writes_per_session: int = 50
    llm_extract: bool = False
    grounding_threshold: float | None = None
    context_tokens: int = 6_000
    max_tokens: int = 1024
    system_prompt: str = "auto"
    chroma_url: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    sources: Mapping[str, str] | None = None
    warnings: tuple[str, ...] = ()

    @property
    def resolved_embedder(self) -> str:
        """``auto`` means openai when a key is configured, local otherwise."""
        if self.embedder != "auto":
            return self.embedder
        return "openai" if self.api_key else "local"

    def describe(self) -> list[tuple[str, str, str, str]]:
        """(setting, environment variable, shown value, source) for every setting; secrets masked."""
        rows = []
        sources = self.sources or {}
        for spec in SPECS:
            value = getattr(self, spec.field)
            if spec.secret:
                shown = "(set)" if value else "(not set)"
            else:
                shown = "" if value is None else str(value)
            rows.append((spec.field, spec.env[0], shown, sources.get(spec.field, "default")))
        return rows


assert {s.field for s in SPECS} == {f.name for f in fields(Settings)} - {"sources", "warnings"}


def _loose_secret_file(path: Path, dotenv: Mapping[str, str]) -> str | None:
    """A warning when a .env holding a key can be read by other users of the machine."""
    if not any(dotenv.get(spec.env[0]) for spec in SPECS if spec.secret):
        return None
    mode = path.stat().st_mode & 0o777
    if not mode & 0o077:
        return None
    return f"{path} holds an API key and other users can read it (mode {mode:04o}): run `chmod 600 {path}`."


def load_settings(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    dotenv_path: Path | None = None,
) -> Settings:
    """Build the settings of this run. ``flags`` holds only the flags the user gave (None means not given)."""
    environ = os.environ if environ is None else environ
    dotenv_path = Path.cwd() / ".env" if dotenv_path is None else dotenv_path
    dotenv = {k: v for k, v in dotenv_values(dotenv_path).items() if v is not None} if dotenv_path.is_file() else {}
    flags = {k: v for k, v in (flags or {}).items() if v is not None}

    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in SPECS:
        if spec.field in flags:
            values[spec.field] = flags[spec.field]
            sources[spec.field] = "flag"
            continue
        for layer_name, layer in (("environment", environ), (".env", dotenv)):
            found = next((name for name in spec.env if layer.get(name)), None)
            if found is None:
                continue
            raw = layer[found]
            try:
                values[spec.field] = spec.parse(raw)
            except ValueError as exc:
                raise UsageError(f"{found}={raw!r} is not valid: {exc}") from exc
            sources[spec.field] = f"{layer_name} ({found})"
            break
        else:
            values[spec.field] = spec.default
    warning = _loose_secret_file(dotenv_path, dotenv) if dotenv else None
    return Settings(**values, sources=sources, warnings=(warning,) if warning else ())


def dotenv_example() -> str:
    """The text of ``.env.example``, generated from ``SPECS`` so it can never miss a setting."""
    lines = ["# Settings of agent. Precedence: command-line flag > environment > this file (.env) > default."]
    for spec in SPECS:
        lines.append("")
        lines.append(f"# {spec.help}")
        default = "" if spec.default is None or spec.field == "data_dir" else spec.default
        if isinstance(default, bool):
            default = str(default).lower()
        lines.append(f"# {spec.env[0]}={default}")
    return "\n".join(lines) + "\n"
