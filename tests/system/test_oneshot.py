"""One-shot prompts and piped documents, as users of ``llm`` and ``aichat`` reach for them: ``agent "PROMPT"``
answers and exits with memory (recalled before, the prompt judged after), ``git diff | agent "review this"`` and
``cat notes.md | agent`` send one message, ``-f FILE`` attaches a file, ``--system`` and ``-o`` set the run's
request. What the fake server recorded proves what was sent; ``agent memories list`` what was remembered.

The chats run in this process (``tests.cli_harness``); what is about the process itself (its pipes, Ctrl-C and
the exit code after it) runs the real ``agent`` (``tests.e2e_helpers``, ``tests.piped_chat``).
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.attachments import MAX_BYTES
from tests.cli_harness import invoke
from tests.e2e_helpers import agent, agent_env
from tests.fake_openai import FakeOpenAI, Reply, held_reply
from tests.piped_chat import PipedAgent

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"
# A document that would be a disclosure if the user had said it: it is someone's notes, piped in.
NOTES = "Meeting notes\n\nAna said: I live in Lisbon and I am allergic to shellfish.\n"
DIFF = "diff --git a/app.py b/app.py\n+# My name is Ottilie and I live in Porto\n+print('hi')\n"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(fallback=Reply("Four.")) as server:
        yield server


def memories(env: dict[str, str]) -> list[str]:
    listed = invoke("memories", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    return [row["text"] for row in json.loads(listed.stdout)]


def sessions(env: dict[str, str]) -> list[str]:
    listed = invoke("sessions", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    return [row["name"] for row in json.loads(listed.stdout)]


def test_a_prompt_is_answered_with_memory_and_the_run_ends(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    told = invoke(PEANUTS, env=env)
    assert told.returncode == 0, told.stderr
    assert told.stdout == "Four.\n"
    assert f"remembered: {PEANUTS}" in told.stderr  # the gate judged the prompt after the reply
    assert memories(env) == [PEANUTS]

    asked = invoke("Any", "snack", "ideas?", env=env)  # words joined, as aichat takes them
    assert asked.returncode == 0, asked.stderr
    assert fake.user_messages() == ["Any snack ideas?"]  # a new conversation: no earlier turn in it
    assert PEANUTS in fake.system_prompts()[-1]  # recalled before the request
    assert sessions(env) == []  # neither run left a timestamped session behind


def test_a_named_session_records_the_one_shot_turn(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    assert invoke("-s", "work", "first question", env=env).returncode == 0
    assert invoke("-s", "work", "second question", env=env).returncode == 0
    assert fake.user_messages() == ["first question", "second question"]  # the first turn is back in context
    shown = invoke("sessions", "show", "work", "--json", env=env)
    assert [t["user"] for t in json.loads(shown.stdout)["turns"]] == ["first question", "second question"]
    assert sessions(env) == ["work"]
    continued = invoke("-c", "third", env=env)
    assert continued.returncode == 0, continued.stderr
    assert fake.user_messages() == ["first question", "second question", "third"]


def test_an_api_error_exits_1_in_one_line(fake: FakeOpenAI) -> None:
    fake.add(Reply(status=401, error={"message": "bad key", "type": "invalid_request_error", "code": None}))
    result = invoke("--no-memory", "hello", env=agent_env(fake))
    assert result.returncode == 1
    assert "refused the API key (401)" in result.stderr
    assert "Traceback" not in result.stderr and "/retry" not in result.stderr


@pytest.mark.parametrize(("args", "stdin", "said"), [
    (("--lines", "hello"), "", "--lines reads every turn from standard input"),
    (("-o", "temprature=0.2", "hi"), "", "agent passes on only these options: temperature (a number from 0 to 2)"),
    (("--temperature", "5", "hi"), "", "temperature='5.0' is not valid: expected a number from 0 to 2"),
    (("-o", "temperature", "hi"), "", "is not NAME=VALUE"),
    (("-o", "max_tokens=5", "hi"), "", "the setting AGENT_MAX_TOKENS"),
    (("--temperature", "0.2", "-o", "temperature=0.3", "hi"), "", "given twice"),
    (("--no-session", "-s", "work", "hi"), "", "--no-session writes no session file"),
    (("sesions",), "", "did you mean `agent sessions`? To send it to the model as a prompt: agent ask sesions"),
    ((), "", "Nothing to send: no prompt, and standard input was empty"),
    (("-",), "  \n", "`-` reads the prompt from standard input, and it was empty"),
])
def test_a_wrong_command_line_is_one_line_and_exit_2(fake: FakeOpenAI, args: tuple[str, ...], stdin: str,
                                                      said: str) -> None:
    result = invoke(*args, stdin=stdin, env=agent_env(fake))
    assert result.returncode == 2, result
    assert said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert fake.chat_requests == []


def test_a_prompt_that_starts_with_a_command_name_is_still_reachable(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    for args in (("--", "chat"), ("ask", "sessions", "list"), ("--no-memory", "--", "-o", "is", "a", "flag")):
        result = invoke(*args, env=env)
        assert result.returncode == 0, result.stderr
    assert fake.user_messages(0) == ["chat"]
    assert fake.user_messages(1) == ["sessions list"]
    assert fake.user_messages(2) == ["-o is a flag"]
    shown = invoke("--help", env=env)
    assert "agent ask PROMPT, or agent -- PROMPT" in " ".join(shown.stdout.split())


def test_flags_before_the_prompt_and_after_it_both_count(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    assert invoke("-m", "fake-large", "--no-memory", "hi", "--temperature", "0.2", env=env).returncode == 0
    body = fake.chat_requests[-1].body
    assert body["model"] == "fake-large" and body["temperature"] == 0.2


def test_request_options_reach_the_request(fake: FakeOpenAI) -> None:
    result = invoke("--no-memory", "-o", "temperature=0.7", "-o", "top-p=0.9", "-o", "seed=42", "hi",
                    env=agent_env(fake))
    assert result.returncode == 0, result.stderr
    body = fake.chat_requests[-1].body
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 42)
    assert isinstance(body["seed"], int)


def test_piped_text_and_a_prompt_are_one_message_and_the_document_is_not_remembered(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    result = invoke("review this", stdin=DIFF, env=env)
    assert result.returncode == 0, result.stderr
    assert len(fake.chat_requests) == 1  # one message, not one request per line
    [message] = fake.user_messages()
    assert message == f"review this\n\nstdin:\n```\n{DIFF.rstrip()}\n```"
    assert memories(env) == []  # "My name is Ottilie and I live in Porto" is in a diff, not said by the user

    told = invoke("I moved to Lisbon", stdin=DIFF, env=env)  # the prompt is the user's words: judged alone
    assert told.returncode == 0, told.stderr
    assert memories(env) == ["I moved to Lisbon"]


def test_a_piped_document_alone_is_one_message_and_nothing_is_remembered(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    result = invoke(stdin=NOTES, env=env)
    assert result.returncode == 0, result.stderr
    assert fake.user_messages() == [NOTES]
    assert memories(env) == [] and sessions(env) == []


def test_a_dash_reads_the_prompt_from_stdin_as_the_users_own_words(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    result = invoke("-", stdin=f"{PEANUTS}\n", env=env)
    assert result.returncode == 0, result.stderr
    assert fake.user_messages() == [PEANUTS]
    assert memories(env) == [PEANUTS]


def test_a_fence_inside_the_piped_text_cannot_close_its_fence(fake: FakeOpenAI) -> None:
    text = "a README\n```sh\nmake run\n```\n"
    assert invoke("--no-memory", "check this", stdin=text, env=agent_env(fake)).returncode == 0
    [message] = fake.user_messages()
    assert message == f"check this\n\nstdin:\n````\n{text.rstrip()}\n````"


def test_files_are_attached_under_their_names(fake: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(NOTES)
    (tmp_path / "app.py").write_text("print('hi')\n")
    env = agent_env(fake)
    result = invoke("-f", "notes.md", "summarise", "-f", "app.py", env=env)
    assert result.returncode == 0, result.stderr
    [message] = fake.user_messages()
    assert message == f"summarise\n\nnotes.md:\n```\n{NOTES.rstrip()}\n```\n\napp.py:\n```\nprint('hi')\n```"
    assert memories(env) == []  # an attached file is a document too

    piped = invoke("-f", "app.py", "compare", stdin=DIFF, env=env)  # stdin and a file: both attached
    assert piped.returncode == 0, piped.stderr
    assert fake.user_messages()[0].startswith("compare\n\nstdin:\n```\ndiff --git")
    assert fake.user_messages()[0].endswith("app.py:\n```\nprint('hi')\n```")


@pytest.mark.parametrize(("content", "said"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.bin is not a text file (it holds NUL bytes)"),
    (b"caf\xe9 au lait", "image.bin is not UTF-8 text (byte 3 is not)"),
    (b"x" * (MAX_BYTES + 1), "image.bin is larger than 512 kB"),
])
def test_a_binary_or_huge_file_is_refused_in_one_line(fake: FakeOpenAI, tmp_path: Path, content: bytes,
                                                       said: str) -> None:
    (tmp_path / "image.bin").write_bytes(content)
    result = invoke("-f", "image.bin", "what is this", env=agent_env(fake))
    assert result.returncode == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert fake.chat_requests == []


def test_binary_stdin_and_missing_files_are_refused_in_one_line(fake: FakeOpenAI, tmp_path: Path) -> None:
    env = agent_env(fake)
    binary = invoke("describe", stdin=b"\x00\x01\x02", env=env)
    assert binary.returncode == 2 and "stdin is not a text file" in binary.stderr
    missing = invoke("-f", "nope.txt", "hi", env=env)
    assert missing.returncode == 2 and "Cannot read nope.txt (No such file or directory)." in missing.stderr
    (tmp_path / "folder").mkdir()
    folder = invoke("-f", "folder", "hi", env=env)
    assert folder.returncode == 2 and "folder is a directory" in folder.stderr
    assert fake.chat_requests == []


def test_system_replaces_the_system_prompt_and_the_memory_still_follows(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    assert invoke(PEANUTS, env=env).returncode == 0
    result = invoke("--system", "You answer in one word.", "Any snack ideas?", env=env)
    assert result.returncode == 0, result.stderr
    system = fake.system_prompts()[-1]
    assert system.startswith("You answer in one word.\n\nToday is ")
    assert "You are a helpful assistant" not in system and PEANUTS in system
    default = invoke("--no-memory", "hi", env=env)
    assert default.returncode == 0 and fake.system_prompts()[-1].startswith("You are a helpful assistant")


def test_a_piped_one_shot_run_is_one_request_in_a_real_process(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    result = agent(env, "review this", stdin=DIFF)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Four.\n"
    assert len(fake.chat_requests) == 1 and fake.user_messages()[0].startswith("review this\n\nstdin:\n")


def test_ctrl_c_during_a_one_shot_reply_exits_130_with_the_partial_reply(fake: FakeOpenAI) -> None:
    reply = held_reply("Here is the first part and then the rest", 4)
    fake.add(reply)
    run = PipedAgent(agent_env(fake), "--no-memory", "tell me a story")
    run._stdin.close()  # nothing piped: the prompt alone
    deadline = time.monotonic() + 120
    while not fake.chat_requests:  # sent: the chat is in the reply's stream, which Ctrl-C interrupts
        assert time.monotonic() < deadline and not run.ended, run.err
        time.sleep(0.01)
    run.send(signal.SIGINT)
    code = run.finish()
    reply.release()
    assert code == 130, run.err
    assert "[interrupted: the partial reply is shown, and not saved (no session)]" in run.err


def test_undo_and_retry_of_a_one_shot_turn_go_by_the_prompt_alone(fake: FakeOpenAI) -> None:
    env = agent_env(fake)
    assert invoke("-s", "work", "I moved to Lisbon", stdin=DIFF, env=env).returncode == 0
    assert memories(env) == ["I moved to Lisbon"]
    undone = invoke("--lines", "-s", "work", stdin="/undo\n", env=env)
    assert undone.returncode == 0, undone.stderr
    assert "forgot the memory it wrote: I moved to Lisbon" in undone.stderr  # found by the words, not the diff
    assert memories(env) == []

    assert invoke("-s", "review", "review this", stdin=DIFF, env=env).returncode == 0
    retried = invoke("--lines", "-s", "review", stdin="/retry\n", env=env)
    assert retried.returncode == 0, retried.stderr
    assert fake.user_messages()[-1].startswith("review this\n\nstdin:\n```\ndiff --git")  # asked again, whole
    assert memories(env) == []  # and the diff is still not the user's words


def test_a_forget_scrubs_the_prompt_of_a_one_shot_turn_too(fake: FakeOpenAI, tmp_path: Path) -> None:
    env = agent_env(fake)
    assert invoke("-s", "work", PEANUTS, stdin=DIFF, env=env).returncode == 0
    [row] = json.loads(invoke("memories", "list", "--json", env=env).stdout)
    assert invoke("memories", "forget", row["id"], env=env).returncode == 0
    assert "peanuts" not in (tmp_path / "data" / "sessions" / "work.json").read_text()
