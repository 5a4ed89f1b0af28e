"""``agent mcp``: this user's memory served over the Model Context Protocol (stdio), so an editor or another agent
shares what the user told the terminal.

Four tools, each the chat's own path: ``search_memories`` is what a turn recalls (the same threshold),
``remember`` goes through the write gate and its refusals as a line typed in the chat does (a question or a
greeting is not stored, a secret or a link never is), ``forget_memory`` forgets through ``agent.forget`` (ledger,
index, session files, input history: not a byte left) and ``read_profile`` is ``/profile``. The memory is the
``--user``'s and nobody else's. A tool given bad input answers with an error result of one line saying what to do;
the server goes on.

Every connection writes as the one session ``mcp``: a client's ``remember`` is a model's choice, not the user's
typed ``/remember``, and that model may be following words it read (a file, a web page), so the chat's cap on new
memories per session in 24 hours (the guard against a drip of injected statements) holds for it, counted across
connections and restarts, or a client that reconnects would lift it. The refusal at the cap names what the user
can still do, since an MCP client has no ``/remember``.

The tools run on the SDK's worker threads; one lock keeps the service to one call at a time, as the chat's memory
thread does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from agent import forget
from agent.app.profile import Entry, label
from agent.app.selectors import SHOWN_ID
from agent.errors import AgentError

if TYPE_CHECKING:
    from agent.app.memory import MemoryService

SESSION = "mcp"  # the session the memories remembered through the server name as theirs
# What the user can still do at the session's write cap, where they are: the explicit ways to store a memory.
STILL = (f'every MCP connection writes as the session "{SESSION}", so a new one does not reset it; the user can '
         'still store a memory with agent memories add "TEXT" in a terminal, or /remember in the chat')
MOST = 50  # search results at most: a client asking for more gets this many
T = TypeVar("T")


def day(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d")


class MemoryTools:
    """The tools' work on one user's memory, one call at a time; each raises ``ToolError`` with the line to show
    for bad input or a refusal."""

    def __init__(self, service: MemoryService, places: forget.Places) -> None:
        self.service = service
        self.places = places
        self._lock = threading.Lock()
        self._turns = 0  # each remember is one turn of the session "mcp", as a chat line is one of its session

    def _run(self, work: Callable[[MemoryService], T]) -> T:
        with self._lock:
            try:
                return work(self.service)
            except AgentError as exc:  # the store did not answer, a refusal, the capacity: said, not raised
                raise ToolError(str(exc)) from exc

    def search(self, query: str, limit: int = 5) -> str:
        if not query.strip():
            raise ToolError("The query is empty: give the words to look for (a question or a topic).")
        if limit < 1:
            raise ToolError(f"limit must be at least 1 (it was {limit}).")
        found = self._run(lambda s: s.search(query, min(limit, MOST), s.threshold))
        if not found:
            threshold = self._run(lambda s: s.threshold)
            return f"No memory is similar enough to that (similarity threshold {threshold:.2f})."
        return "\n".join(f"- [id {m.record.id[:SHOWN_ID]}, said {day(m.record.created_at)}, similarity "
                         f"{m.similarity:.2f}] {_flat(m.record.text)}" for m in found)

    def remember(self, text: str) -> str:
        if not text.strip():
            raise ToolError("The text is empty: give what the user said about themselves, in their words.")

        def observe(service: MemoryService) -> str:
            self._turns += 1
            report = service.observe(text, session=SESSION, turn=self._turns, still=STILL)
            if not report.stored:
                why = report.skipped_reason or report.decision.reason
                return f"Not remembered: {why}."
            by_id = service.records(report.superseded)
            lines = [f"{report.verb(r)} (id {r.id[:SHOWN_ID]}): {_flat(r.text)}" for r in report.stored]
            lines += [f"it replaces: {_flat(r.text)}" for r in by_id.values()]
            lines += [f"evicted (past the memory capacity): {_flat(r.text)}" for r in report.evicted]
            return "\n".join(lines)

        return self._run(observe)

    def forget(self, memory_id: str) -> str:
        wanted = memory_id.strip().lower()
        if len(wanted) < SHOWN_ID or any(c not in "0123456789abcdef" for c in wanted):
            raise ToolError(f"{memory_id!r} is not a memory id: give the {SHOWN_ID} characters search_memories "
                            "shows after 'id'.")
        named = [r for r in self._run(lambda s: s.list()) if r.id.startswith(wanted)]
        if not named:
            raise ToolError(f"No memory has the id {wanted}: it may be forgotten already; search_memories gives "
                            "each memory's id.")
        if len(named) > 1:  # eight characters name one memory among millions; a longer prefix settles it
            raise ToolError(f"{len(named)} memories have ids that start {wanted}: give more of the id.")
        result = self._run(lambda s: forget.forget(forget.inline(s), named, self.places))
        return "\n".join([f"forgot: {_flat(named[0].text)}", *result.lines()])

    def profile(self) -> str:
        current, history = self._run(lambda s: s.profile())
        if not current and not history:
            return ("No profile facts yet: they come from what the user says about themselves (where they live, "
                    "their job, diet and allergies, what to call them...).")
        return "\n".join([*_entries(current, "current"), *_entries(history, "replaced")])


def _entries(entries: Sequence[Entry], state: str) -> list[str]:
    lines = []
    for entry in entries:
        when = f"said {day(entry.said_at)}" + (f", replaced {day(entry.replaced_at)}" if entry.replaced_by else "")
        lines.append(f"- {label(entry.key)}: {_flat(entry.value)} ({state}; {when}; memory "
                     f"{entry.memory[:SHOWN_ID]})")
    return lines


def _flat(text: str) -> str:
    return " ".join(text.split())


class _OneLineErrors(MCPServer[Any]):
    """The SDK's server, with arguments that do not fit a tool's schema said in one line (the SDK sends pydantic's
    report: four lines and a link per field), naming the fields and what each needs, never the values given."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            fields = "; ".join(f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: "
                               f"{error['msg'].lower()}" for error in cause.errors())
            raise ToolError(f"Error executing tool {name}: wrong arguments ({fields}); the tool's input schema "
                            "says what it takes.") from cause


def server(tools: MemoryTools) -> MCPServer[Any]:
    """The MCP server of ``tools``; its descriptions are what a client's model reads to choose a tool."""
    mcp = _OneLineErrors("agent-memory", instructions=(
        "Long-term memory of one user, shared with their terminal chat (agent). Search it before answering "
        "anything that depends on who the user is; remember what they say about themselves; read the profile "
        "for the stable facts (allergies, diet, where they live)."), log_level="WARNING")

    @mcp.tool()
    def search_memories(query: str, limit: int = 5) -> str:
        """The user's memories most similar to QUERY, above the similarity threshold the chat uses; each with its
        id (for forget_memory), the date it was said and its similarity."""
        return tools.search(query, limit)

    @mcp.tool()
    def remember(text: str) -> str:
        """Remember what the user said about themselves (their words), as the chat does: the write gate decides
        what is worth keeping; secrets and links are never stored; a change ("I moved to Berlin") replaces the
        value it changes."""
        return tools.remember(text)

    @mcp.tool()
    def forget_memory(memory_id: str) -> str:
        """Forget one memory for good, by its id (from search_memories or read_profile): its words leave every
        file of the user's data directory; what it had replaced is current again."""
        return tools.forget(memory_id)

    @mcp.tool()
    def read_profile() -> str:
        """The stable facts about the user (where they live, job, diet, allergies, partner...), each with when it
        was said and the memory it came from, then the values later ones replaced."""
        return tools.profile()

    return mcp


def serve(service: MemoryService, places: forget.Places) -> None:
    """Serve ``service`` on stdin/stdout until the client closes the connection."""
    server(MemoryTools(service, places)).run("stdio")

