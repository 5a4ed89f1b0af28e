"""Settings: typed, immutable, checked and read in one place with the precedence flag > environment > user config
file (``~/.config/agent/config.env``) > ``.env`` of the working directory > default. A ``.env`` other than the one of
the checkout the agent runs from is read only once the user approved it (``agent.settings_files`` says why), and
every run that reads one says so.

Every setting is declared once, as a field of ``Settings`` with its environment variable, default, help text and,
for a number, its bounds (``SPECS`` is read from those fields); the same table drives ``.env.example``, ``agent
config`` (which shows where each value came from) and the parsing and checking here. The memory settings' numbers
are in ``agent.defaults``, which the memory's policy starts from too. The API key is a setting like any other but is
never shown: ``describe`` masks it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import SplitResult, urlsplit

import platformdirs

from agent import defaults, settings_files
from agent.errors import Remedy, UsageError
from agent.settings_files import SettingsFile

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CHECKOUT_DATA_DIR = PROJECT_ROOT / "agent_memory_db"
APP_NAME = "agent"
# The embedders there are (``agent.wiring.build_embedder`` builds them), and the setting's choice among them.
EmbedderKind = Literal["local", "openai"]
EMBEDDER_KINDS: tuple[EmbedderKind, ...] = get_args(EmbedderKind)
EmbedderChoice = Literal["auto", "local", "openai"]


def running_from_checkout() -> bool:
    """True when this code runs from a source tree (an editable install, or ``python -m agent`` in the checkout),
    False when it was installed from a wheel (``pip``, ``pipx``, ``uv tool``): then ``PROJECT_ROOT`` is
    ``site-packages``, where nothing of the user's belongs."""
    return (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "prompts").is_dir()


def default_data_dir() -> Path:
    """The checkout's ``agent_memory_db/`` when running from a checkout (where the project keeps it, git-ignored),
    otherwise the platform's user data directory (``~/.local/share/agent`` on Linux, honouring XDG_DATA_HOME)."""
    if running_from_checkout():
        return CHECKOUT_DATA_DIR
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def user_config_file() -> Path:
    """The user-level settings file: ``~/.config/agent/config.env`` on Linux (honouring XDG_CONFIG_HOME), the
    platform's user config directory elsewhere."""
    return platformdirs.user_config_path(APP_NAME, appauthor=False) / "config.env"


@dataclass(frozen=True)
class Bounds:
    """The allowed values of a numeric setting: finite, from ``low`` (or above it when ``low_open``) to ``high``.

    Every number the agent reads has bounds, because a value outside them does harm quietly rather than failing:
    a capacity of 0 evicts every memory, a nan threshold recalls nothing, a negative timeout fails every request.
    """

    low: float
    high: float
    low_open: bool = False
    whole: bool = True

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            return False
        if self.whole and value != int(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high

    def __str__(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        if self.low_open:
            return f"{kind} above {_number(self.low)} and at most {_number(self.high)}"
        return f"{kind} from {_number(self.low)} to {_number(self.high)}"


def _number(value: float) -> str:
    return f"{int(value):,}" if value == int(value) else str(value)


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError("expected true or false")


def _int(raw: str) -> int:
    return int(raw.strip())


def _optional_float(raw: str) -> float | None:
    return float(raw) if raw.strip() else None


def _optional_str(raw: str) -> str | None:
    return raw.strip() or None


def _name(raw: str) -> str:
    """A name that must say something: a user, a model. Blank is refused rather than taken as a name, because
    ``--user "$UNSET"`` would otherwise read and write another store than the one meant; so is an invisible character
    (a zero-width space, a bidi control), which makes two names that look the same, and two stores."""
    if not raw.strip():
        raise ValueError("expected a name, got an empty one")
    invisible = next((char for char in raw if unicodedata.category(char) == "Cf"), None)
    if invisible is not None:
        raise ValueError(f"it holds the invisible character U+{ord(invisible):04X}, and a name is what it shows")
    return raw


def _optional_path(raw: str) -> Path | None:
    return _path(raw) if raw.strip() else None


def _path(raw: str) -> Path:
    """A directory given by the user, ``~`` expanded (a shell leaves ``--data-dir=~/x`` as it is) and ``..`` taken
    lexically, as the user reads it: ``proj/typo/..`` is ``proj``, so no ``typo`` is made on the way to a refusal.
    Blank is refused: ``--data-dir "$UNSET"`` must not mean the working directory."""
    if not raw.strip():
        raise ValueError("expected a directory, got an empty path")
    try:
        return Path(os.path.normpath(Path(raw).expanduser()))
    except RuntimeError as exc:  # ~name of an unknown user, or no home directory
        raise ValueError(f"its ~ cannot be expanded ({exc})") from exc


def _optional_url(raw: str) -> str | None:
    """An http(s) URL with a host, or None for blank; what is wrong is said before any request is made."""
    value = raw.strip()
    if not value:
        return None
    parts = _split_url(value, {"http", "https"}, "an http:// or https:// URL", f"add http:// (http://{value})")
    if not parts.hostname:
        raise ValueError("it names no host")
    return value


def _split_url(value: str, schemes: set[str], expected: str, no_scheme: str) -> SplitResult:
    """The parts of the URL ``value``; ``ValueError`` saying what is wrong when it has no scheme (``no_scheme`` says
    what to do), a port that is not one, or a scheme not in ``schemes`` (``expected`` says what is)."""
    if "://" not in value:
        raise ValueError(f"the URL has no scheme; {no_scheme}")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise ValueError(f"it is not a valid URL ({exc})") from exc
    if parts.scheme.lower() not in schemes:
        raise ValueError(f"expected {expected}, not {parts.scheme}://")
    return parts


# ``password=`` in a conninfo string (``host=db password=x``) or in a URL's query (``?password=x``), quoted or not.
_PASSWORD_PARAMETER = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", re.IGNORECASE)
# What a URL's user:password must spell percent-encoded (RFC 3986 userinfo), and a % that encodes nothing.
_NOT_IN_USERINFO = re.compile(r"[/?#\[\]@\s]|%(?![0-9A-Fa-f]{2})")


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """(scheme, user:password, the rest) of ``url``, or None when it has no user part. The user part ends at the
    last ``@``: a password may hold any character, even one a URL must encode, and still be masked."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    return (scheme, userinfo, host) if sep and at else None


def without_password(url: str) -> str:
    """``url`` with its password replaced by ``***``, whether in its ``user:password@`` part (even one with an
    unescaped ``@``, ``#`` or ``/``), a ``password=`` query parameter or a ``password=`` conninfo entry: a database
    URL is shown (``agent config``, a message naming a bad value) but its password never is."""
    parts = _userinfo(url)
    if parts is not None and ":" in parts[1]:
        scheme, userinfo, host = parts
        url = f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}"
    return _PASSWORD_PARAMETER.sub(r"\1***", url)


def _database_url(raw: str) -> str | None:
    """A PostgreSQL connection URL (``postgresql://`` or ``postgres://``, as libpq takes them), or None for blank.
    Only its form is checked here; whether the server answers is said when memory opens. A character the user
    part must percent-encode is named with its encoding, and no message quotes the user part: libpq's own would
    show a piece of the password ("failed to resolve host 't@127.0.0.1'")."""
    value = raw.strip()
    if not value:
        return None
    example = "postgresql://USER@HOST/DATABASE"
    parts = _userinfo(value)
    if parts is not None:
        bad = _NOT_IN_USERINFO.search(parts[1])
        if bad:
            char = bad.group()
            spelled = "%25" if char == "%" else f"%{ord(char):02X}"
            raise ValueError(f"its user name or password holds {char!r}, which a URL must write as {spelled}")
        value_to_check = f"{parts[0]}://USER@{parts[2]}"
    else:
        value_to_check = value
    _split_url(value_to_check, {"postgresql", "postgres"}, example, f"expected {example}")
    return value


def _embedder(raw: str) -> EmbedderChoice:
    value = raw.strip().lower()
    if value == "auto":
        return "auto"
    return embedder_kind(value, "expected auto, local or openai")


def embedder_kind(name: str, problem: str = "expected local or openai") -> EmbedderKind:
    """``name`` as an embedder kind; ``ValueError`` saying ``problem`` when it is none."""
    for kind in EMBEDDER_KINDS:
        if name == kind:
            return kind
    raise ValueError(problem)


SIMILARITY = Bounds(-1.0, 1.0, whole=False)
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class Aliases:
    """Short names for models (``AGENT_MODEL_ALIASES=fast=gpt-4o-mini,smart=gpt-4o``): ``-m fast``, ``AGENT_MODEL=
    fast`` and ``/model fast`` name the model it stands for. Shown as it is written."""

    pairs: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str | None:
        return dict(self.pairs).get(name)

    def __str__(self) -> str:
        return ", ".join(f"{alias}={model}" for alias, model in self.pairs)


def _model_aliases(raw: str) -> Aliases:
    """``NAME=MODEL`` pairs separated by commas or spaces; what is wrong with one is said."""
    pairs: dict[str, str] = {}
    for entry in re.split(r"[,\s]+", raw.strip()):
        if not entry:
            continue
        alias, sep, model = entry.partition("=")
        if not sep or not model:
            raise ValueError(f"{entry!r} is not NAME=MODEL (e.g. fast=gpt-4o-mini)")
        if not _ALIAS.fullmatch(alias):
            raise ValueError(f"{alias!r} is not an alias name: use letters, digits, '.', '-' or '_'")
        if alias in pairs:
            raise ValueError(f"{alias!r} is given twice")
        pairs[alias] = model
    return Aliases(tuple(pairs.items()))


def _placement(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"auto", "system", "user"}:
        raise ValueError(f"expected auto, system or user, got {raw!r}")
    return value


@dataclass(frozen=True)
class Spec:
    """One setting: its field name, environment variable(s), parser, default, one line of help, and for a number the
    bounds it must lie within. ``blank_is_default``: an empty variable counts as not set (True) or is refused."""

    field: str
    env: tuple[str, ...]
    parse: Callable[[str], Any]
    default: Any
    help: str
    secret: bool = False
    bounds: Bounds | None = None
    blank_is_default: bool = True
    show: Callable[[str], str] | None = None  # how a value is shown, when not as it is (a URL's password masked)

    @property
    def flag(self) -> str:
        return "--" + self.field.replace("_", "-")

    def shown(self, raw: str) -> str:
        """``raw`` as messages may show it."""
        return self.show(raw) if self.show else raw

    def allowed(self) -> str:
        """What the setting accepts, for messages and ``.env.example``."""
        return str(self.bounds) if self.bounds else ""


def setting(
    env: str | tuple[str, ...],
    parse: Callable[[str], Any],
    default: Any,
    help: str,
    *,
    secret: bool = False,
    bounds: Bounds | None = None,
    blank_is_default: bool = True,
    default_factory: Callable[[], Any] | None = None,
    show: Callable[[str], str] | None = None,
) -> Any:
    """A field of ``Settings`` with its ``Spec``: the one declaration of a setting (``SPECS`` is read from the
    fields). ``default_factory`` computes the value of a setting whose default depends on where the code runs;
    ``default`` is then what ``.env.example`` shows (nothing)."""
    spec = Spec("", (env,) if isinstance(env, str) else env, parse, default, help, secret, bounds, blank_is_default,
                show)
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata={_SPEC: spec})
    return dataclasses.field(default=default, metadata={_SPEC: spec})


_SPEC = "spec"


@dataclass(frozen=True)
class Settings:
    """The effective settings of one run: every setting is declared here once, with its ``Spec``."""

    api_key: str | None = setting("OPENAI_API_KEY", _optional_str, None,
                                  "OpenAI API key. Not needed for a server on localhost.", secret=True)
    base_url: str | None = setting(("OPENAI_BASE_URL", "OPENAI_API_BASE"), _optional_url, None,
                                   "OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama.")
    model: str = setting("AGENT_MODEL", _name, "gpt-4o-mini", "Chat model name.")
    model_aliases: Aliases = setting(
        "AGENT_MODEL_ALIASES", _model_aliases, Aliases(),
        "Short names for models, NAME=MODEL separated by commas (fast=gpt-4o-mini,smart=gpt-4o): -m, AGENT_MODEL "
        "and /model take them.")
    data_dir: Path = setting(
        "AGENT_DATA_DIR", _path, None,
        "Directory for memories, sessions and history (created 0700; an existing one must be empty or a store).",
        blank_is_default=False, default_factory=default_data_dir)
    user: str = setting("AGENT_USER", _name, "default", "Whose memories these are; each user has a separate store.",
                        blank_is_default=False)
    embedder: EmbedderChoice = setting(
        "AGENT_EMBEDDER", _embedder, "auto", "auto (openai when a key is set, else local), local (offline MiniLM) or "
        "openai.")
    embedding_model: str = setting("AGENT_EMBEDDING_MODEL", _name, "text-embedding-3-small",
                                   "Embedding model name for the openai embedder.")
    local_model_dir: Path | None = setting(
        "AGENT_LOCAL_MODEL_DIR", _optional_path, None,
        "Directory holding model.onnx and tokenizer.json to use instead of the packaged MiniLM.")
    memory_k: int = setting("AGENT_MEMORY_K", _int, defaults.MEMORY_K,
                            "How many memories at most are injected per turn.", bounds=Bounds(1, 100))
    memory_threshold: float | None = setting(
        "AGENT_MEMORY_THRESHOLD", _optional_float, None,
        "Minimum cosine similarity for a memory to be injected (empty: the embedder's calibrated default).",
        bounds=SIMILARITY)
    memory_tokens: int = setting("AGENT_MEMORY_TOKENS", _int, defaults.MEMORY_TOKENS,
                                 "Token budget of the memory block.", bounds=Bounds(50, 100_000))
    memory_capacity: int = setting("AGENT_MEMORY_CAPACITY", _int, defaults.MEMORY_CAPACITY,
                                   "Memories kept per user; the least recently seen are evicted past it.",
                                   bounds=Bounds(1, 10_000_000))
    memory_writes_per_session: int = setting(
        "AGENT_MEMORY_WRITES_PER_SESSION", _int, defaults.WRITES_PER_SESSION,
        "Cap on memory writes in one session (a guard against gradual poisoning).", bounds=Bounds(1, 100_000))
    llm_extract: bool = setting("AGENT_LLM_EXTRACT", _bool, False,
                                "Also ask the chat model to extract up to two standalone facts per turn.")
    grounding_threshold: float | None = setting(
        "AGENT_GROUNDING_THRESHOLD", _optional_float, None,
        "Minimum cosine similarity of an extracted fact to its source turn (empty: the embedder's default).",
        bounds=SIMILARITY)
    context_tokens: int = setting("AGENT_CONTEXT_TOKENS", _int, 6_000,
                                  "Token budget of the short-term message list; older turns fold into a summary.",
                                  bounds=Bounds(500, 10_000_000))
    max_tokens: int = setting(
        "AGENT_MAX_TOKENS", _int, 1024,
        "Longest reply, in tokens (sent as max_tokens; 0 sends none and lets the server decide).",
        bounds=Bounds(0, 1_000_000))
    system_prompt: str = setting(
        "AGENT_SYSTEM_PROMPT", _placement, "auto",
        "Where the system prompt, memory and summary go: system (a system message), user (folded into the first "
        "user message, for chat templates without a system role) or auto (from the server's template or model).")
    chroma_url: str | None = setting("AGENT_CHROMA_URL", _optional_url, None,
                                     "Use a Chroma server (e.g. http://127.0.0.1:8000) instead of the embedded store.")
    database_url: str | None = setting(
        "AGENT_DATABASE_URL", _database_url, None,
        "Keep the memories in PostgreSQL (postgresql://USER@HOST/DATABASE) instead of the data directory's ledger; "
        "with AGENT_CHROMA_URL, several machines share one memory.", show=without_password)
    database_timeout: float = setting(
        "AGENT_DATABASE_TIMEOUT", float, 10.0,
        "Seconds a connection or statement of the memory database may take before memory gives up on the server "
        "(a frozen one) and tries it again three times as long later.", bounds=Bounds(1, 600, whole=False))
    timeout: float = setting("AGENT_TIMEOUT", float, 60.0, "Seconds before a model request times out.",
                             bounds=Bounds(0, 3_600, low_open=True, whole=False))
    max_retries: int = setting("AGENT_MAX_RETRIES", _int, 3, "Retries for 429, 5xx and timeouts.",
                               bounds=Bounds(0, 10))
    sources: Mapping[str, str] | None = None
    warnings: tuple[str, ...] = ()
    files: tuple[SettingsFile, ...] = ()  # the settings files this run looked for (user config, .env), found or not
    notices: tuple[str, ...] = ()  # the files read that are not the user's own, named at every run

    @property
    def resolved_embedder(self) -> EmbedderKind:
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
                shown = "" if value is None else spec.shown(str(value))
            rows.append((spec.field, spec.env[0], shown, sources.get(spec.field, "default")))
        return rows


# Every setting, in the order of ``Settings``: ``.env.example``, ``agent config`` and the parsing go through these.
SPECS: tuple[Spec, ...] = tuple(dataclasses.replace(f.metadata[_SPEC], field=f.name)
                                for f in fields(Settings) if _SPEC in f.metadata)


def _loose_secret_file(path: Path, values: Mapping[str, str]) -> str | None:
    """A warning when a settings file holding a key can be read by other users of the machine."""
    if not any(values.get(spec.env[0]) for spec in SPECS if spec.secret):
        return None
    mode = path.stat().st_mode & 0o777
    if not mode & 0o077:
        return None
    return f"{path} holds an API key and other users can read it (mode {mode:04o}): run `chmod 600 {path}`."


# No setting needs more: a path is at most 4,096 bytes on Linux, a URL or a model name far less. A longer value is a
# mistake (a file pasted into a variable), and one that would be sent with every request or shown in every message.
MAX_VALUE = 4_096
_CONTROL_CHAR = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _shown_value(spec: Spec, raw: str) -> str:
    """``raw`` as a message quotes it: a secret never, a long value cut."""
    shown = "***" if spec.secret else spec.shown(raw)
    return repr(shown if len(shown) <= 200 else shown[:200] + "…")


def _value(spec: Spec, raw: Any, where: str) -> Any:
    """``raw`` parsed (when it is text) and checked against the spec's bounds; a ``UsageError`` naming ``where``
    (the variable or flag and the value) and what is allowed when it is not valid. No text setting holds a control
    character (a NUL in ``AGENT_USER`` from a settings file) or more than ``MAX_VALUE`` characters."""
    if isinstance(raw, str):
        if len(raw) > MAX_VALUE:
            raise UsageError(f"{where} is not valid: it is {len(raw):,} characters long, and a setting holds at most "
                             f"{MAX_VALUE:,}.")
        control = _CONTROL_CHAR.search(raw)
        if control:
            raise UsageError(f"{where} is not valid: it holds the control character {control.group()!r}.")
    try:
        value = spec.parse(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        reason = f"expected {spec.allowed()}" if spec.bounds else str(exc)
        raise UsageError(f"{where} is not valid: {reason}.") from exc
    if spec.bounds is not None and value is not None and value not in spec.bounds:
        raise UsageError(f"{where} is not valid: expected {spec.allowed()}.")
    return value


Layer = tuple[str, Path | None, Mapping[str, str]]  # (its name as sources show it, its file if any, its variables)


def _aliases(layers: Sequence[Layer]) -> list[str]:
    """A line for each setting set under two of its names with different values in one layer (``OPENAI_BASE_URL``
    and ``OPENAI_API_BASE``): only the first is read, and the other would seem to be in use."""
    lines = []
    for _, path, layer in layers:
        for spec in SPECS:
            given = [name for name in spec.env if layer.get(name)]
            if len({layer[name] for name in given}) > 1:
                lines.append(f"{' and '.join(given)} are both set {f'in {path}' if path else 'in the environment'}, "
                             f"with different values: {given[0]} is used, the others are ignored.")
    return lines


def _not_read(file: SettingsFile) -> str | None:
    """The line saying that a ``.env`` was not read, when it sets anything of the agent's."""
    names = _ours(file.names)
    if file.read or file.status == "absent" or not names:
        return None
    return f"{file.path} was not read (it sets {_names(names)}): {file.describe().removeprefix('not read: ')}."


def _used(file: SettingsFile) -> str | None:
    """The line naming a file read that is not the user's own, at every run."""
    if file.status != "approved":
        return None
    names = _ours(file.names)
    sets = f"it sets {_names(names)}" if names else "it sets none of agent's settings"
    revoke = Remedy.TRUST_REVOKE.command()
    return f"using the settings of {file.path}, which you approved ({sets}; {revoke} stops that)."


def _ours(names: Sequence[str]) -> list[str]:
    """The names of ``names`` the agent reads, or would read but for a typo (``AGENT_...``)."""
    known = {name for spec in SPECS for name in spec.env}
    return [name for name in names if name in known or name.startswith("AGENT_")]


def _names(names: Sequence[str]) -> str:
    """Names from a file, as a line shows them: an odd one quoted and escaped, six at most."""
    shown = ", ".join(settings_files.shown_name(name) for name in names[:6])
    return shown + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def checkout_dotenv(path: Path) -> bool:
    """Whether ``path`` is the ``.env`` of the checkout this code runs from, the one file besides the user config
    file that is the user's own: whoever can write it can change the code that reads it."""
    return running_from_checkout() and path.name == ".env" and path.parent.resolve() == PROJECT_ROOT


def approve_dotenv(path: Path, config_path: Path | None = None) -> SettingsFile:
    """``agent trust FILE``: note the bytes of ``path`` as approved; the file as it will be read."""
    return settings_files.approve(path, settings_files.approvals_file(config_path or user_config_file()))


def revoke_dotenv(path: Path, config_path: Path | None = None) -> bool:
    """``agent trust --revoke FILE``: whether there was an approval to take back."""
    return settings_files.revoke(path, settings_files.approvals_file(config_path or user_config_file()))


def _misspelled(layers: Sequence[Layer]) -> list[str]:
    """A line for each ``AGENT_`` name no setting has (``AGENT_TIMOUT=5``), naming the closest one: ignored
    silently, a typo would leave the user wondering why the setting has no effect."""
    known = sorted(name for spec in SPECS for name in spec.env)
    lines = []
    for _, path, layer in layers:
        for name in layer:
            if name.startswith("AGENT_") and name not in known:
                # compared without the prefix every name shares, which would make any name look close
                close = difflib.get_close_matches(name[6:], [k[6:] for k in known if k.startswith("AGENT_")], n=1)
                hint = f"did you mean AGENT_{close[0]}?" if close else f"{Remedy.CONFIG.command()} lists the settings."
                lines.append(f"{name} ({f'in {path}' if path else 'in the environment'}) is not a setting of agent, "
                             f"so it is ignored: {hint}")
    return lines


def load_settings(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    dotenv_path: Path | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Build the settings of this run, checking every value given. ``flags`` holds only the flags the user gave
    (None means not given). Precedence: flag > environment > user config file > ``.env`` > default.

    A value outside its setting's bounds, or one that does not parse, raises ``UsageError`` before anything is
    opened or created, whichever layer it came from: a typo must never reach the store.
    """
    environ = os.environ if environ is None else environ
    dotenv_path = Path.cwd() / ".env" if dotenv_path is None else dotenv_path
    config_path = user_config_file() if config_path is None else config_path
    dotenv = (settings_files.own(dotenv_path, ".env") if checkout_dotenv(dotenv_path)
              else settings_files.dotenv(dotenv_path, settings_files.approvals_file(config_path)))
    files = (settings_files.own(config_path, "user config"), dotenv)
    layers: tuple[Layer, ...] = (("environment", None, environ), *((f.label, f.path, f.values) for f in files))
    flags = {k: v for k, v in (flags or {}).items() if v is not None}

    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in SPECS:
        if spec.field in flags:
            raw = flags[spec.field]
            values[spec.field] = _value(spec, raw, f"{spec.flag} {_shown_value(spec, str(raw))}")
            sources[spec.field] = "flag"
            continue
        for layer_name, path, layer in layers:
            found = next((name for name in spec.env if name in layer and (layer[name] or not spec.blank_is_default)),
                         None)
            if found is None:
                continue
            raw = layer[found]
            where = f"{found}={_shown_value(spec, raw)}" + (f" in {path}" if path else "")
            values[spec.field] = _value(spec, raw, where)
            sources[spec.field] = f"{layer_name} ({found})"
            break
    warnings = (*(w for f in files if f.values and (w := _loose_secret_file(f.path, f.values))),
                *(line for f in files for line in f.problems), *_aliases(layers), *_misspelled(layers),
                *(line for f in files if (line := _not_read(f))))
    notices = tuple(line for f in files if (line := _used(f)))
    return Settings(**values, sources=sources, warnings=warnings, files=files, notices=notices)


def dotenv_example() -> str:
    """The text of ``.env.example``, generated from ``SPECS`` so it can never miss a setting."""
    lines = ["# Settings of agent. Precedence: command-line flag > environment > the user config file",
             "# (~/.config/agent/config.env) > this file (.env in the working directory) > default.",
             "# A .env outside agent's own checkout is read only once you approve it: "
             f"{Remedy.TRUST.command(path='.env')}."]
    for spec in SPECS:
        lines.append("")
        lines.append(f"# {spec.help}")
        if spec.bounds:
            lines.append(f"# Allowed: {spec.allowed()}.")
        default = "" if spec.default is None else spec.default
        if isinstance(default, bool):
            default = str(default).lower()
        lines.append(f"# {spec.env[0]}={default}")
    return "\n".join(lines) + "\n"
