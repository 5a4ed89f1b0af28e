"""The OpenAI client is made while another thread of the chat may still be importing ``httpx`` (chromadb, opening
memory): the openai SDK looks that module up in ``sys.modules`` without importing it, and a half-made one failed
the chat's first turn ("partially initialized module 'httpx' has no attribute 'URL'"). ``make_client`` waits for
that import instead.

A process of its own, since imports are the process's state: a stand-in ``httpx`` whose import stops half-way
until the test releases it (three seconds after it began, which only decides whether the race is exercised, never
whether the test passes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HALF_MADE = '''import os, time
open(os.environ["STARTED"], "w").close()
while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.01)
class URL:
    pass
'''

SCRIPT = '''import os, threading, time
from pathlib import Path
from agent.adapters.openai_client import Endpoint, make_client
threading.Thread(target=lambda: __import__("httpx"), daemon=True).start()
while not os.path.exists(os.environ["STARTED"]):
    time.sleep(0.01)
threading.Timer(3, lambda: open(os.environ["RELEASE"], "w").close()).start()
print(type(make_client(Endpoint(None, "sk-test", 60.0, 3, Path("agent.env")))).__name__)
'''


def test_a_client_made_while_another_thread_imports_httpx_waits_for_that_import(tmp_path: Path) -> None:
    (tmp_path / "httpx").mkdir()
    (tmp_path / "httpx" / "__init__.py").write_text(HALF_MADE)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "OPENAI_API_KEY": "sk-test", "HOME": str(tmp_path),
           "STARTED": str(tmp_path / "started"), "RELEASE": str(tmp_path / "release")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "OpenAI", done.stderr
