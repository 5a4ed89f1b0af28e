"""The agent installs like a tool: a wheel built from the checkout, installed into a fresh venv outside it, chats
from another working directory with its prompts, keeps its memory in the platform's user data directory, and
writes nothing beside the package.

Before, ``pip install .`` gave an agent whose first turn failed ("The prompt file .../site-packages/prompts/
system.md cannot be read") and whose data directory was created beside ``site-packages``.

Offline and without a network build: the wheel is built by this venv's setuptools (its PEP 517 backend, called
as ``pip wheel --no-build-isolation`` calls it), and the fresh venv finds the dependencies in this venv's
``site-packages`` through a ``.pth`` file (they are not what is tested; the package is).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent import __version__
from agent.adapters.ledger import SqliteLedger
from agent.app.data_dir import MARKER
from tests.fake_openai import FakeOpenAI, Reply
from tests.warm_agent import ROOT

pytestmark = pytest.mark.usefixtures("model_cache")

PEANUTS = "I can't eat peanuts, they make my throat swell"


def test_the_wheel_lists_every_package_under_agent() -> None:
    """``packages`` is listed in pyproject.toml (to map prompts/ into the wheel), so a new subpackage must be
    added there or the installed agent would miss it."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "agent").rglob("*.py")
               if "__pycache__" not in path.parts}
    assert listed == on_disk | {"agent.prompt_files"}


INSTALL_LINE = re.compile(r"`((?:\S*/)?(?:pip|pipx|uv tool) install [^`]+)`")


def test_every_install_line_in_the_readme_and_the_manual_installs_this_checkout() -> None:
    """The README said `pip install 'agent[postgres]'`, which installs an unrelated project that holds the name
    `agent` on the package index. This one is not published there (its distribution is `remembering-agent`), so
    every install line of the README and of the manual (``docs/``) names the checkout, with extras this project has."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    lines = [line for page in pages for line in INSTALL_LINE.findall(page.read_text())]
    assert len(lines) >= 4, lines
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "remembering-agent"
    for line in lines:
        words = shlex.split(line)
        targets = [word for word in words[words.index("install") + 1:] if not word.startswith("-")]
        assert targets and all(re.fullmatch(r"\.(\[[\w,]+\])?", target) for target in targets), line
        extras = {extra for target in targets for extra in re.findall(r"\w+", target)}
        assert extras <= set(project["optional-dependencies"]), line


def run(*args: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{args}: {result.stdout}{result.stderr}"
    return result  # type: ignore[no-any-return]


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[Path]:
    """A fresh venv outside the checkout with the agent installed from a wheel; yields its ``bin/agent``."""
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the checkout
    ignore = shutil.ignore_patterns("__pycache__")
    for part in ("agent", "prompts"):
        shutil.copytree(ROOT / part, source / part, ignore=ignore)
    for part in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / part, source / part)
    # setuptools' PEP 517 backend, as ``pip wheel --no-build-isolation`` calls it, in one process instead of two
    run(sys.executable, "-c", "import sys, setuptools.build_meta as b; b.build_wheel(sys.argv[1])",
        tmp_path / "wheels", cwd=source)
    [wheel] = (tmp_path / "wheels").glob("remembering_agent-*.whl")

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "agent-deps.pth").write_text("".join(f"{path}\n" for path in sorted(deps)))
    # With its dependencies and the postgres extra, as the README's `pip install '.[postgres]'`: pip finds each one
    # already installed (through the .pth), and the index is never asked.
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-index", f"{wheel}[postgres]")
    yield venv / "bin" / "agent"


@pytest.mark.slow
def test_an_installed_wheel_chats_from_elsewhere_and_keeps_memory_in_the_user_data_dir(
    installed: Path, tmp_path: Path
) -> None:
    venv = installed.parent.parent
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert (site / "agent" / "prompt_files" / "system.md").is_file()
    before = files_under(venv)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = Path(os.environ["HOME"])  # the autouse fixture's, in tmp_path
    with FakeOpenAI(fallback=Reply("Noted.")) as fake:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
               "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
               "OPENAI_BASE_URL": fake.url, "AGENT_EMBEDDER": "local"}
        chat = subprocess.run([installed, "--lines", "-s", "monday"], input=f"{PEANUTS}\n", capture_output=True,
                              text=True, timeout=120, cwd=elsewhere, env=env)
        assert chat.returncode == 0, chat.stderr
        assert chat.stdout == "Noted.\n"
        assert f"remembered: {PEANUTS}" in chat.stderr
        first_line = (ROOT / "prompts" / "system.md").read_text().strip().splitlines()[0]
        assert first_line in fake.system_prompts()[0], "the packaged system prompt reached the model"

        version = subprocess.run([installed, "--version"], capture_output=True, text=True, timeout=300, env=env)
        assert version.stdout == f"agent {__version__}\n"

    store = tmp_path / "xdg-data" / "agent"  # read here rather than by more runs of the installed agent
    assert (store / MARKER).is_file()
    ledger = SqliteLedger(store / "ledger.sqlite3")
    try:
        assert [record.text for record in ledger.all("default")] == [PEANUTS]
    finally:
        ledger.close()
    assert (store / "sessions" / "monday.json").is_file()
    assert files_under(venv) == before, "nothing is written beside the package"
    assert list(elsewhere.iterdir()) == [], "nor in the working directory"
