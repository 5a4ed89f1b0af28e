"""One exception tree for everything the agent reports to its user.

Adapters catch the exceptions of their libraries and raise one of these ``from`` the original, so the CLI
can turn any of them into one line and an exit code, and print a traceback only with ``--debug``::

    AgentError                      base; ``str(err)`` is the one line the user sees; ``exit_code`` is 1
    ├── ConfigError                 a setting is missing or cannot be used
    │   └── UsageError              a value the user gave is invalid (exit code 2)
    ├── MemoryUnavailable           the long-term store cannot be opened or used right now
    │   ├── StoreCorrupt            a file of the store is damaged; ``path`` names it
    │   ├── StoreLocked             another process holds the store
    │   ├── StoreAway               a server of the store does not answer (down, refusing, frozen): it may come back
    │   │   └── StoreOpening        the store is still opening, and a turn does not wait for a server any longer
    │   ├── DiskFull                the disk has no room for the store's writes; ``path`` names the directory
    │   └── EmbedderMismatch        the store was built by another embedder; the fix is a reindex
    ├── MemoryRefused               an explicit memory that must never be stored (a secret, a link, an instruction)
    ├── Interrupted                 Ctrl-C stopped a command half-way; the message says what is left (exit code 130)
    ├── OverCapacity                storing a memory would evict many others: the user decides (``memories evict``)
    ├── SpoolFull                   the turns waiting on this machine for the store reached their limit
    ├── EmbeddingError              the embedder failed (model missing, server error)
    ├── ChatError                   the chat model failed
    │   ├── ChatRetryable           429, 5xx, timeouts: retried before it reaches the user
    │   └── ChatFatal               400, 401, 404, quota: never retried
    │       ├── ContextOverflow     the request is longer than the server's context; ``context`` its size if known
    │       └── SystemRoleRefused   the server's chat template refuses system messages
    └── SessionError                a session name is invalid, or its file cannot be used
        ├── SessionCorrupt          the session file does not parse; ``path`` names it, ``reason`` says why
        └── SessionBusy             another process has the session open

A layer below the front ends says what fixes a fault by naming a ``Remedy``, never the command that carries it out:
an adapter knows that the index can be rebuilt from the ledger, not what the command line calls that.
"""

from __future__ import annotations

import enum
from pathlib import Path


class Remedy(enum.Enum):
    """A command the user runs (to fix a fault, or to do what a message points to), as a message says it:
    ``f"...: {Remedy.REBUILD}."`` reads "run `agent memories rebuild`", and ``Remedy.EVICT_TO.command(count=9)``
    the command alone, with the facts it takes. The value is how the front ends spell it, in this one place: a
    command renamed changes one line here, and no layer below them spells a command. A remedy that takes facts is
    phrased with ``run`` or ``command``, which fill them in; ``str`` of it fails for want of them."""

    REBUILD = "agent memories rebuild"
    REINDEX = "agent memories reindex --embedder {embedder}"
    EVICT = "agent memories evict"
    EVICT_TO = "agent memories evict --to {count}"
    ADD = "agent memories add"
    EXPORT = "agent memories export"
    IMPORT = "agent memories import"
    RETIRE = "agent memories machines --retire"
    RESUME = "agent -s {name}"
    SESSION_RM = "agent sessions rm {name}"
    TRUST = "agent trust {path}"
    TRUST_REVOKE = "agent trust --revoke"
    CONFIG = "agent config"

    def command(self, **facts: object) -> str:
        """The command in backticks, as a message quotes it, with ``facts`` in its placeholders."""
        return f"`{self.value.format(**facts)}`"

    def run(self, **facts: object) -> str:
        """The fix as a message ends with it: run, then the command."""
        return f"run {self.command(**facts)}"

    def __str__(self) -> str:
        return self.run()


class AgentError(Exception):
    """Base of every error the agent reports; the message is a complete sentence for the user."""

    exit_code = 1


class ConfigError(AgentError):
    """A setting is missing or has a value the agent cannot use."""


class UsageError(ConfigError):
    """A flag, argument or setting value is invalid: the command line was used wrongly."""

    exit_code = 2


class MemoryUnavailable(AgentError):
    """Long-term memory cannot be used now; chat may go on without it."""


class StoreCorrupt(MemoryUnavailable):
    """A file of the memory store is damaged. ``path`` is the file (or directory) that failed."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class DiskFull(MemoryUnavailable):
    """A write of the memory store failed for want of room (no space, a quota, a file size limit): not damage,
    so nothing is moved aside. ``path`` is the directory that could not be written."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class StoreLocked(MemoryUnavailable):
    """Another process holds the store and the wait for it ran out."""


class StoreAway(MemoryUnavailable):
    """A server of the store (the PostgreSQL database, the Chroma server) could not be reached or did not answer in
    time: a reason that can pass by itself, so a chat that meets it at start keeps what it would remember on this
    machine and opens the store again later (``MemoryWorker``). A store that answers and refuses (a
    newer schema, a database that does not exist) is a plain ``MemoryUnavailable``: waiting does not cure it."""


class StoreOpening(StoreAway):
    """The store, on a server, has not finished opening within the time a turn waits for it: this turn goes without
    memories, and the open goes on in the background."""


class EmbedderMismatch(MemoryUnavailable):
    """The store's vectors come from another embedder than the one requested."""


class MemoryRefused(AgentError):
    """Text the user asked to remember that no memory may hold, whoever asks: the message says why."""


class Interrupted(AgentError):
    """Ctrl-C stopped a command whose work is half done: the message says what was done and what finishes it."""

    exit_code = 130


class OverCapacity(AgentError):
    """The store is far over its capacity: a new memory would evict in bulk, which only the user may decide."""


class SpoolFull(AgentError):
    """The turns waiting on this machine for a store that does not answer (``agent.spool``) reached their limit: the
    oldest are kept, and a new one is not."""


class EmbeddingError(AgentError):
    """The embedder could not produce vectors."""


class ChatError(AgentError):
    """The chat model failed."""


class ChatRetryable(ChatError):
    """A transient failure (rate limit, server error, timeout) that survived the retries."""


class ChatFatal(ChatError):
    """A failure that retrying cannot fix: bad request, bad key, unknown model, exhausted quota."""


class ContextOverflow(ChatFatal):
    """The server refused the request as too long, or answered it with an empty stream (llama-cpp-python's way of
    saying so). ``context`` is the server's context size in tokens when it named one."""

    def __init__(self, message: str, context: int | None = None) -> None:
        super().__init__(message)
        self.context = context


class SystemRoleRefused(ChatFatal):
    """The server's chat template refuses system messages ("System role not supported"): the system prompt has to
    travel in the user message."""


class SessionError(AgentError):
    """A session name is refused, a session file is damaged, or another process has the session."""


class SessionCorrupt(SessionError):
    """A session file is damaged: it does not parse as a session. ``reason`` says what is wrong with it."""

    def __init__(self, message: str, path: Path, reason: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class SessionBusy(SessionError):
    """Another agent process holds the lock of the session."""
