"""``agent --version`` and ``agent config`` answer without loading numpy, onnxruntime or chromadb: their import
took seconds on a loaded machine, and neither command needs a vector. The settings take the memory's defaults from
``agent.defaults``, which imports nothing.

A process of its own per command, since what is imported is the process's state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = '''import json, sys
from agent.cli import main
sys.argv = ["agent", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps([name for name in ("numpy", "onnxruntime", "chromadb") if name in sys.modules]))
'''


@pytest.mark.parametrize("command", [["--version"], ["config"]])
def test_a_command_that_needs_no_vector_loads_no_vector_library(tmp_path: Path, command: list[str]) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AGENT_", "OPENAI_"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), AGENT_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, *command], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    *printed, loaded = done.stdout.strip().splitlines()
    assert printed, "the command printed nothing"
    assert json.loads(loaded) == []
