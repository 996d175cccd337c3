"""Can this machine sandbox a server? Asked once per process, off the loop's back.

bwrap needs user namespaces (or a setuid bwrap); a CI machine or a hardened kernel may
have them off (``kernel.unprivileged_userns_clone = 0``, an AppArmor rule), and then
bwrap fails before the server starts. The answer is None (it can) or one plain sentence.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from portico.runtime.sandbox.bwrap import BwrapUnavailable, find_bwrap

_answer: tuple[Path | None, str | None] | None = None


def _unsupported() -> str | None:
    if sys.platform == "linux":
        return None
    if sys.platform == "win32":
        return "sandboxing servers is not supported on Windows yet"
    return "sandboxing servers is not supported on this system yet (Linux only for now)"


async def _probe() -> tuple[Path | None, str | None]:
    problem = _unsupported()
    if problem:
        return None, problem
    try:
        bwrap = find_bwrap()
    except BwrapUnavailable as exc:
        return None, f"no sandbox program: {exc}"
    proc = await asyncio.create_subprocess_exec(
        str(bwrap),
        "--unshare-all",
        "--ro-bind",
        "/",
        "/",
        "true",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    if proc.returncode != 0:
        why = err.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        return None, (
            f"this machine cannot set up a sandbox (user namespaces may be off): bwrap said {why!r}"
        )
    return bwrap, None


async def sandbox_support() -> tuple[Path | None, str | None]:
    """(the bwrap to use, None) where sandboxes work, else (None, why not)."""
    global _answer
    if _answer is None:
        _answer = await _probe()
    return _answer


def forget() -> None:
    """Ask again next time (tests)."""
    global _answer
    _answer = None
