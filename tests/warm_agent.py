"""The real ``agent`` command in a process of its own, forked from one warm interpreter instead of started afresh.

For tests whose point is the process (a kill, a signal, a terminal that closes, a limit on file sizes); the rest
run the command in-process (``tests.cli_harness``). A fresh ``python -m agent`` pays a second or more of imports
before it does anything, each time. Here one helper process (``python -m tests.warm_agent``) imports the agent
once; each run is a fork of it that becomes ``agent ARGS`` with its own environment, working directory and
standard streams (file descriptors sent over a Unix socket), runs the console script's ``main`` and ends as the
interpreter would (see ``_shut_down``). A test gets the child's pid to signal it, and its exit code from the
helper, which reaps it. One helper serves a whole test process (``shared``, the ``warm_agent`` fixture).

Several children may run at once (three chats and two ``agent memories add`` loops on one data directory, say):
the helper waits for the socket and for each child's pidfd together, and says which child it reaped. The helper
refuses to fork once it runs a second thread (a lock held by that thread would stay held in the child); the
embedder and the stores are opened by each child, never before the fork.
"""

from __future__ import annotations

import atexit
import fcntl
import gc
import importlib
import json
import os
import resource
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_MAX_FDS = 3


class WarmAgent:
    """The forking helper; any number of children at once, each ``start``-ed and then ``wait``-ed for, from any
    thread."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
        self._proc = subprocess.Popen([sys.executable, "-m", "tests.warm_agent", str(theirs.fileno())],
                                      pass_fds=(theirs.fileno(),), env=env, cwd=ROOT)
        theirs.close()
        self._sock = ours
        self._changed = threading.Condition()
        self._forked: list[int] = []  # the pids of the forks asked for, in order, until ``start`` takes them
        self._reaped: dict[int, int] = {}  # exit codes the helper reported, until their child is waited for
        self._open = True  # until the helper's end of the socket closes
        self._asking = threading.Lock()  # one request at a time: its pid is the next one the helper sends
        self._listener = threading.Thread(target=self._listen, name="warm-agent", daemon=True)
        self._listener.start()
        with self._changed:
            self._changed.wait_for(lambda: self._forked or not self._open, 120)
            assert self._forked == [0], "the warm agent helper did not start"
            self._forked.clear()

    def _listen(self) -> None:
        """Every message of the helper, as it comes: its start (pid 0), each fork's pid, each child's exit code. One
        thread reads them all, so any number of threads may each wait for a child of its own."""
        pending = b""
        while chunk := self._sock.recv(65536):
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                message: dict[str, Any] = json.loads(line)
                with self._changed:
                    if "reaped" in message:
                        self._reaped[message["reaped"]] = message["code"]
                    else:
                        self._forked.append(0 if message.get("ready") else message["pid"])
                    self._changed.notify_all()
        with self._changed:
            self._open = False
            self._changed.notify_all()

    def start(self, args: Sequence[str], env: Mapping[str, str], streams: Sequence[int], *,
              terminal: bool = False, file_size: int | None = None, module: str | None = None,
              umask: int | None = None) -> int:
        """Fork ``agent ARGS`` with ``env`` as its whole environment, this process's working directory, and
        ``streams`` as its stdin, stdout and stderr; ``terminal``: the stdin is a pty's slave that becomes the
        child's controlling terminal (Ctrl-C and a hang-up reach it as signals); ``file_size``: no file it writes
        grows past that many bytes (``RLIMIT_FSIZE``, SIGXFSZ ignored: every write past it fails with EFBIG, as
        ENOSPC does on a full disk); ``module``: the child runs ``python -m MODULE ARGS`` instead (a test helper
        such as ``tests.helpers_store``); ``umask``: the child's, instead of the helper's. Returns the child's
        pid."""
        request = {"args": list(args), "env": dict(env), "cwd": os.getcwd(), "terminal": terminal,
                   "file_size": file_size, "module": module, "umask": umask}
        with self._asking:
            socket.send_fds(self._sock, [json.dumps(request).encode() + b"\n"], list(streams))
            with self._changed:
                self._changed.wait_for(lambda: self._forked or not self._open, 120)
                if not self._forked:
                    raise AssertionError(f"the warm agent helper did not fork (it exited: {self._proc.poll()})")
                return self._forked.pop(0)

    def wait(self, pid: int, timeout: float = 120.0) -> int:
        """The exit code of child ``pid`` (negative: the signal that ended it), once the helper has reaped it; fails
        only if the child still runs after a generous ``timeout``."""
        code = self.poll(pid, timeout)
        if code is None:
            raise AssertionError(f"the agent (pid {pid}) did not exit within {timeout} s")
        return code

    def poll(self, pid: int, timeout: float = 0.0) -> int | None:
        """The exit code of child ``pid`` if it is reaped within ``timeout``, else None."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self._reaped or not self._open, timeout)
            if pid in self._reaped:
                return self._reaped.pop(pid)
            if not self._open:
                raise AssertionError(f"the warm agent helper exited ({self._proc.wait(timeout=60)})")
            return None

    def run(self, env: Mapping[str, str], *args: str, stdin: str | bytes = "",
            file_size: int | None = None) -> subprocess.CompletedProcess[str]:
        """``agent ARGS`` to the end, with ``stdin`` piped in and its output captured through pipes (no file, so
        ``file_size`` caps only what the agent writes itself), as ``subprocess.run``."""
        with tempfile.TemporaryFile() as inp:
            inp.write(stdin if isinstance(stdin, bytes) else stdin.encode())
            inp.seek(0)
            (out, out_w), (err, err_w) = os.pipe(), os.pipe()
            pid = self.start(args, env, [inp.fileno(), out_w, err_w], file_size=file_size)
            os.close(out_w)
            os.close(err_w)
            captured = {out: b"", err: b""}
            open_ends = [out, err]
            while open_ends:  # both ends close when the agent exits; reading both never lets a full pipe block it
                ready = select.select(open_ends, [], [], 120)[0]
                if not ready:  # generous: only an agent that hangs gets here
                    os.kill(pid, signal.SIGKILL)
                    self.wait(pid)
                    raise AssertionError(f"agent {' '.join(args)} printed nothing for 120 s and was killed")
                for end in ready:
                    chunk = os.read(end, 65536)
                    captured[end] += chunk
                    if not chunk:
                        open_ends.remove(end)
                        os.close(end)
            code = self.wait(pid)
        return subprocess.CompletedProcess(["agent", *args], code, captured[out].decode("utf-8", "replace"),
                                           captured[err].decode("utf-8", "replace"))

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)  # the helper reads the end of its requests, and the listener ends
        self._listener.join(60)
        self._sock.close()
        self._proc.wait(timeout=60)


class WarmProcess:
    """``python -m MODULE ARGS`` forked by the warm helper with its standard streams on pipes, used as the
    ``subprocess.Popen`` it stands for: ``stdin``, ``stdout`` and ``stderr`` (text), ``pid``, ``returncode``,
    ``poll``, ``wait``, ``communicate``, ``send_signal`` and ``kill``."""

    def __init__(self, module: str, args: Sequence[str], env: Mapping[str, str], umask: int | None = None) -> None:
        (in_r, in_w), (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe(), os.pipe()
        self.args = [sys.executable, "-m", module, *args]
        self._warm = shared()
        self.pid = self._warm.start(args, env, [in_r, out_w, err_w], module=module, umask=umask)
        for end in (in_r, out_w, err_w):
            os.close(end)
        self.stdin = open(in_w, "w", encoding="utf-8")  # noqa: SIM115  (closed by communicate)
        self.stdout = open(out_r, encoding="utf-8", errors="replace")  # noqa: SIM115
        self.stderr = open(err_r, encoding="utf-8", errors="replace")  # noqa: SIM115
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._warm.poll(self.pid)
        return self.returncode

    def wait(self, timeout: float = 120.0) -> int:
        if self.returncode is None:
            self.returncode = self._warm.wait(self.pid, timeout)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        """Signal it unless it has been reaped (then its pid may be another process's)."""
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float = 120.0) -> tuple[str, str]:
        """Close its stdin, read its output to the end (both streams at once, so neither pipe fills), wait for it."""
        self.stdin.close()
        read: dict[int, str] = {}
        readers = [threading.Thread(target=lambda n, f: read.__setitem__(n, f.read()), args=(n, stream),
                                    daemon=True) for n, stream in enumerate((self.stdout, self.stderr))]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(timeout)
        self.stdout.close()
        self.stderr.close()
        return read[0], read[1]


_SHARED: list[WarmAgent] = []
_SHARING = threading.Lock()


def shared() -> WarmAgent:
    """The helper of this test process, started at its first use: every test that runs ``agent`` as a process of
    its own forks it from here (``tests.e2e_helpers``), so a run pays the agent's imports once per worker, not once
    per process. It ends with the test process: the helper kills what still runs once its socket closes."""
    with _SHARING:
        if not _SHARED:
            _SHARED.append(WarmAgent())
        return _SHARED[0]


def _import_what_children_import() -> None:
    """Every module of the agent (many import their libraries only when first used, as the chat's prompt does) and
    the parts of its libraries a store or a chat model loads on first use: paid once here, not in every child. Not
    onnxruntime, whose import starts a thread: each child that embeds locally imports it. The token counter's
    encoding is loaded here too (0.2-0.3 CPU-s of every chat's start), and what a command's first run builds."""
    import chromadb.api.rust  # noqa: F401  (the client's implementation, loaded when the first client opens)
    import openai.resources.chat  # noqa: F401
    import tokenizers  # noqa: F401

    root = ROOT / "agent"
    for path in sorted(root.rglob("*.py")):
        if path.name != "__main__.py":
            importlib.import_module(".".join(("agent", *path.relative_to(root).with_suffix("").parts))
                                    .removesuffix(".__init__"))
    from agent import tokens

    tokens.warm_up()
    # What a command's first run builds before it does anything: the command line typer makes of the app, and the
    # HTTP client of a local server (its transport's modules). A child paid 20-30 ms of CPU for them.
    import chromadb.telemetry.product.posthog  # noqa: F401  (imported when a client opens)
    import openai.resources.embeddings  # noqa: F401

    from agent import cli
    from agent.adapters import openai_client

    cli._command()
    openai_client._plain_local_client("http://127.0.0.1:9/v1")


def _serve(sock: socket.socket) -> dict[str, Any] | None:
    """Fork a child for each request; in the child, return its request; in the helper, None once the test is
    done."""
    _import_what_children_import()
    gc.freeze()  # what is imported stays out of every collection, so the children do not copy it page by page
    reply = sock.makefile("w", encoding="utf-8")
    reply.write(json.dumps({"ready": True}) + "\n")
    reply.flush()
    children: dict[int, int] = {}  # pidfd -> pid of each child still running
    while True:
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:
            raise SystemExit(f"the warm agent runs {threads} threads: forking it is not safe")
        ready = select.select([sock.fileno(), *children], [], [])[0]
        for pidfd in (fd for fd in ready if fd in children):  # a pidfd is readable once its child has exited
            pid = children.pop(pidfd)
            os.close(pidfd)
            _, status = os.waitpid(pid, 0)
            reply.write(json.dumps({"reaped": pid, "code": os.waitstatus_to_exitcode(status)}) + "\n")
            reply.flush()
        if sock.fileno() not in ready:
            continue
        msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, _MAX_FDS)
        if not msg:
            for pidfd, pid in children.items():  # the test is done: what still runs is ended, not left behind
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(pidfd)
            return None
        request: dict[str, Any] = json.loads(msg)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            for pidfd in children:
                os.close(pidfd)
            request["fds"] = fds
            return request
        children[os.pidfd_open(pid)] = pid
        for fd in fds:
            os.close(fd)
        reply.write(json.dumps({"pid": pid}) + "\n")
        reply.flush()


def _become_agent(request: dict[str, Any]) -> int:
    """In the child: the streams, environment, working directory and argv of ``agent ARGS`` (or of ``python -m
    MODULE ARGS``), then its main; returns the exit status the interpreter would give it."""
    from agent.cli import main

    # Ctrl-C as an interpreter started at a terminal has it: a test run started in the background of a shell (and
    # so the helper) inherits SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    stdin, stdout, stderr = request["fds"]
    if request["terminal"]:
        os.setsid()
        fcntl.ioctl(stdin, termios.TIOCSCTTY, 0)
    if request["umask"] is not None:
        os.umask(request["umask"])
    if request["file_size"] is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (request["file_size"], request["file_size"]))
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
    for fd in {stdin, stdout, stderr} - {0, 1, 2}:
        os.close(fd)
    # Streams as the interpreter opens them at start: line-buffered at a terminal, block-buffered otherwise.
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", buffering=1 if os.isatty(1) else -1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    module = request["module"]
    sys.argv = [module or "agent", *request["args"]]
    try:
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            main(request["args"])
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _shut_down(code: int) -> None:
    """The interpreter's shutdown as far as the agent relies on it: the threads that are no daemon are joined, the
    ``atexit`` functions run (they close the stores), the streams are flushed. The teardown of every module is
    skipped: in a fork it would touch, and so copy, the whole heap inherited from the helper, for nothing the agent
    does."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = 120  # what the interpreter exits with when it cannot flush its streams
    if code < 0:  # ended by an uncaught Ctrl-C: the interpreter ends itself with the signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    with socket.socket(fileno=int(sys.argv[1])) as channel:
        child = _serve(channel)
    if child is not None:
        _shut_down(_become_agent(child))
