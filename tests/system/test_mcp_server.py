"""``agent mcp`` as an editor meets it: a real ``agent mcp`` process spoken to by the MCP SDK's own client over
stdio, offline (the local embedder; the fake OpenAI server as the configured model, which memory never calls).
What the server remembers is in the store the chat reads, what it forgets leaves every file, and bad input is an
error result."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

from tests.cli_harness import invoke
from tests.e2e_helpers import agent
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"
BOSTON = "I live in Boston, in a small flat near the river."
BERLIN = "Big news: I moved to Berlin last month!"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Noted.")) as server:
        yield server


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def session_with(fake: FakeOpenAI, calls: list[tuple[str, dict[str, object]]], *args: str
                 ) -> tuple[list[str], list[CallToolResult], str]:
    """The tool names the server lists and the results of ``calls``, made in one connection, and its stderr."""
    env = {**os.environ, "OPENAI_BASE_URL": fake.url, "AGENT_EMBEDDER": "local"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "agent", "mcp", *args], env=env)
    errors = Path(os.environ["HOME"]) / "mcp-stderr.txt"

    async def run() -> tuple[list[str], list[CallToolResult]]:
        with errors.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                names = sorted(tool.name for tool in (await client.list_tools()).tools)
                return names, [await client.call_tool(name, arguments) for name, arguments in calls]

    names, results = anyio.run(run)
    return names, results, errors.read_text()


@pytest.mark.slow
def test_an_mcp_client_remembers_searches_reads_the_profile_and_forgets_as_the_chat_does(fake: FakeOpenAI) -> None:
    names, results, stderr = session_with(fake, [
        ("remember", {"text": PEANUTS}),
        ("remember", {"text": BOSTON}),
        ("remember", {"text": BERLIN}),
        ("remember", {"text": "what's the weather like?"}),
        ("remember", {"text": "my api key is sk-proj-4fJ9kQ2mX7pL1vN8bR3tY6wZ0aC5dE"}),
        ("search_memories", {"query": "snack ideas without nuts?"}),
        ("read_profile", {}),
    ])
    assert names == ["forget_memory", "read_profile", "remember", "search_memories"]
    said = [text(r) for r in results]
    assert not any(r.is_error for r in results), said
    assert said[0].startswith("remembered (id ") and PEANUTS in said[0]
    assert "it replaces: I live in Boston" in said[2], "a move replaces the home it changes, as in the chat"
    assert said[3].startswith("Not remembered: "), "the gate keeps no question"
    assert said[4].startswith("Not remembered: ") and "secret" in said[4] and "sk-proj" not in said[4]
    assert PEANUTS in said[5] and "similarity" in said[5]
    assert "lives in: Berlin (current" in said[6] and "lives in: Boston (replaced" in said[6]
    assert "Traceback" not in stderr
    listed = invoke("memories", "list")
    assert PEANUTS in listed.stdout and "sk-proj" not in listed.stdout

    peanut_id = said[0].split("(id ")[1][:8]
    berlin_id = said[2].split("(id ")[1][:8]
    _, results, _ = session_with(fake, [("forget_memory", {"memory_id": peanut_id}),
                                        ("forget_memory", {"memory_id": berlin_id}),
                                        ("search_memories", {"query": "snack ideas without nuts?"}),
                                        ("read_profile", {})])
    said = [text(r) for r in results]
    assert said[0].startswith(f"forgot: {PEANUTS}")
    assert "Current again, now that the memory that replaced it is gone: I live in Boston" in said[1]
    assert PEANUTS not in said[2] and "peanuts" not in said[3] and "lives in: Boston (current" in said[3]
    data = Path(os.environ["AGENT_DATA_DIR"])
    assert not any(b"throat swell" in path.read_bytes() for path in data.rglob("*") if path.is_file()), \
        "forgotten through agent.forget: not a byte left in the data directory"


@pytest.mark.slow
def test_memory_served_is_the_user_s_own(fake: FakeOpenAI) -> None:
    session_with(fake, [("remember", {"text": PEANUTS})], "--user", "alice")
    _, results, _ = session_with(fake, [("search_memories", {"query": "peanuts"}), ("read_profile", {})],
                                 "--user", "bob")
    assert "peanuts" not in text(results[0]) and "No profile facts yet" in text(results[1])
    assert PEANUTS in invoke("memories", "list", "--user", "alice").stdout
    assert "peanuts" not in invoke("memories", "list").stdout


@pytest.mark.slow
def test_bad_input_to_a_tool_is_an_error_result_of_one_line_and_the_server_goes_on(fake: FakeOpenAI) -> None:
    _, results, stderr = session_with(fake, [
        ("remember", {"text": "   "}),
        ("forget_memory", {"memory_id": "12"}),
        ("forget_memory", {"memory_id": "0123456789ab"}),
        ("search_memories", {"query": "peanuts", "limit": 0}),
        ("search_memories", {"query": ["not", "text"]}),
        ("remember", {}),
        ("read_profile", {}),
    ])
    said = [text(r) for r in results]
    assert [r.is_error for r in results] == [True] * 6 + [False], said
    prefix = "Error executing tool "  # the SDK's, before the line the tool gave
    assert said[0] == f"{prefix}remember: The text is empty: give what the user said about themselves, in their words."
    assert said[1] == f"{prefix}forget_memory: '12' is not a memory id: give the 8 characters search_memories shows " \
                      "after 'id'."
    assert said[2].startswith(f"{prefix}forget_memory: No memory has the id 0123456789ab")
    assert said[3] == f"{prefix}search_memories: limit must be at least 1 (it was 0)."
    # The SDK checks the arguments against the schema; said in one line, without the value given.
    assert said[4] == f"{prefix}search_memories: wrong arguments (query: input should be a valid string); the " \
                      "tool's input schema says what it takes."
    assert said[5] == f"{prefix}remember: wrong arguments (text: field required); the tool's input schema says " \
                      "what it takes."
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_the_chat_and_an_mcp_client_share_one_memory_both_ways(fake: FakeOpenAI) -> None:
    """What the user told the terminal an editor finds, and what the editor remembered the chat's next request
    carries: one store, as two terminals share it."""
    env = {**os.environ, "OPENAI_BASE_URL": fake.url, "AGENT_EMBEDDER": "local"}
    told = agent(env, "--lines", "-s", "monday", stdin=f"{PEANUTS}\n")
    assert told.returncode == 0 and f"remembered: {PEANUTS}" in told.stderr, told.stderr
    _, results, _ = session_with(fake, [("search_memories", {"query": "can I eat peanut butter?"}),
                                        ("remember", {"text": "I play the cello in an orchestra on Thursdays"})])
    assert PEANUTS in text(results[0]) and text(results[1]).startswith("remembered (id ")
    asked = agent(env, "--lines", "-s", "friday", stdin="Which instrument do I play in the orchestra?\n")
    assert asked.returncode == 0, asked.stderr
    assert "I play the cello in an orchestra" in fake.system_prompts()[-1]


@pytest.mark.slow
def test_the_write_cap_spans_mcp_connections_and_its_refusal_names_what_the_user_can_still_do(
        fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client's ``remember`` is a model's choice, so the chat's cap on new memories per session holds for it; a
    new connection does not lift it, and the refusal says what works where an MCP client is (no ``/remember``)."""
    monkeypatch.setenv("AGENT_MEMORY_WRITES_PER_SESSION", "2")
    _, results, _ = session_with(fake, [("remember", {"text": PEANUTS}), ("remember", {"text": BOSTON})])
    assert all(text(r).startswith("remembered (id ") for r in results), [text(r) for r in results]
    _, results, _ = session_with(fake, [("remember", {"text": "I play the cello in an orchestra on Thursdays"})])
    refused = text(results[0])
    assert not results[0].is_error
    assert refused.startswith("Not remembered: the cap of 2 new memories from one session in 24 hours is reached")
    assert 'every MCP connection writes as the session "mcp"' in refused, "why reconnecting did not reset it"
    assert 'agent memories add "TEXT"' in refused, "the explicit way to store it that the user has"
    assert "cello" not in invoke("memories", "list").stdout
    assert invoke("memories", "add", "I play the cello in an orchestra on Thursdays").returncode == 0
    assert "cello" in invoke("memories", "list").stdout
