"""Machines of a shared deployment for the system tests: a "machine" is a data directory and a HOME of its own, on
a database and a Chroma server the tests share, its chats and commands against the fake OpenAI server (whose
embeddings they use too, ``tests.e2e_helpers.env_for``). Shared by the tests of several machines on one ledger, so
that none of them imports another test module."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent.adapters.postgres_ledger import PostgresLedger
from agent.domain import ForgetRecord
from tests.cli_harness import invoke
from tests.e2e_helpers import env_for
from tests.fake_openai import FakeOpenAI

# What the machines are told and asked after; a forget of it must leave every file.
SISTER = "My sister Ada lives in Porto and teaches the cello"


@dataclass(frozen=True)
class Machine:
    """One machine of the deployment: its own HOME and data directory, the shared servers' URLs."""

    root: Path
    database_url: str
    chroma_url: str

    def env(self, fake: FakeOpenAI, **extra: str) -> dict[str, str]:
        return {**env_for(fake), "HOME": str(self.root / "home"), "AGENT_DATA_DIR": str(self.root / "data"),
                "AGENT_DATABASE_URL": self.database_url, "AGENT_CHROMA_URL": self.chroma_url, **extra}


def machines(root: Path, database_url: str, chroma_url: str) -> tuple[Machine, Machine]:
    made = []
    for name in ("laptop", "desktop"):
        (root / name / "home").mkdir(parents=True)
        made.append(Machine(root / name, database_url, chroma_url))
    return made[0], made[1]


def agent(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``agent ARGS`` on a machine, in this process (``tests.cli_harness``): a command's behaviour is under test
    here, not its process, which the chats kept open beside it have."""
    return invoke("--lines", *args, stdin=stdin, env=env)


def listed(env: dict[str, str], user: str = "default") -> list[str]:
    done = agent(env, "memories", "--user", user, "export")
    assert done.returncode == 0, done.stderr
    return sorted(json.loads(line)["text"] for line in done.stdout.splitlines() if line.strip())


# The machine's own embedded index, not the Chroma server: the forget under test is the ledger's.
ALONE = {"AGENT_CHROMA_URL": ""}


def machine_id(machine: Machine) -> str:
    return (machine.root / "data" / "machine-id").read_text().strip()


def pending(url: str) -> list[ForgetRecord]:
    ledger = PostgresLedger(url)
    try:
        return ledger.pending_forgets()
    finally:
        ledger.close()


def forget_on(machine: Machine, fake: FakeOpenAI) -> None:
    env = machine.env(fake, **ALONE)
    [memory] = [json.loads(line)["id"] for line in agent(env, "memories", "export").stdout.splitlines()]
    gone = agent(env, "memories", "forget", memory)
    assert gone.returncode == 0, gone.stderr
