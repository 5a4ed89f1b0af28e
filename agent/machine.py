"""This machine's id: a random id kept in the data directory, by which a shared ledger knows which machines still
have to scrub their own files of a forget (``agent.forget``).

Why a file of its own and not the host name: two data directories on one host are two machines for this purpose
(each has its own sessions and input history), and a host renamed or reinstalled is not the same files. The id is
made once, by whichever process needs it first; two processes starting together on a new data directory must not
each register an id of their own (the one whose file lost would be waited for by every forget, for ever), so the
file is published with a hard link, which fails when another process published one first, and then that one is
used.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from pathlib import Path

from agent.errors import ConfigError, Remedy
from agent.files import read_regular, write_private

MACHINE_FILE = "machine-id"
_ID = re.compile(r"[0-9a-f]{32}")


def machine_id(root: Path) -> str:
    """The id of the data directory ``root``, made and kept in ``root/machine-id`` the first time."""
    path = root / MACHINE_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    made = secrets.token_hex(16)
    temp = root / f".{MACHINE_FILE}.{secrets.token_hex(4)}.tmp"
    try:
        write_private(temp, f"{made}\n".encode(), f".{MACHINE_FILE}")
        os.link(temp, path)
    except FileExistsError:
        return _read(path)  # another process published its id first: this machine's id is that one
    except OSError as exc:
        raise ConfigError(f"The machine id {path} cannot be written ({exc.strerror}): check that the data directory "
                          "is writable.") from exc
    finally:
        temp.unlink(missing_ok=True)
    return made


def _read(path: Path) -> str:
    try:
        text = read_regular(path).decode("ascii", "replace").strip()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"The machine id {path} cannot be read ({exc.strerror}): delete it, and this data "
                          "directory registers as a new machine.") from exc
    if not _ID.fullmatch(text):
        raise ConfigError(f"The machine id {path} is damaged: delete it, and this data directory registers as a new "
                          f"machine ({Remedy.RETIRE.command()} the old one).")
    return text


def machine_name() -> str:
    """What the list of machines calls this one beside its id: the host name."""
    return socket.gethostname()
