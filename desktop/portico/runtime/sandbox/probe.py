"""Can this machine sandbox a server, and how? Asked once per process, off the loop's back.

Linux: bubblewrap first. bwrap needs user namespaces (or a setuid bwrap); a CI machine or
a hardened kernel may have them off (``kernel.unprivileged_userns_clone = 0``, an
AppArmor rule), and then bwrap fails before the server starts. Then Landlock, which needs
neither privilege nor namespaces: files bounded as with bwrap, but no private /tmp or
home of its own (Portico hands it fresh folders) and, below ABI 4, no network rules at
all (``SandboxMethod.filters_network``). macOS: ``sandbox-exec``. The answer is a method,
or None and one plain sentence.

``PORTICO_SANDBOX_METHODS`` (``bwrap,landlock`` by default on Linux) names the methods
to try, in order: a person whose bwrap misbehaves can say ``landlock``, and the tests
force the fallback the same way.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from portico.runtime.sandbox.bwrap import BwrapUnavailable, find_bwrap
from portico.runtime.sandbox.landlock import NET_ABI, SCOPE_ABI, landlock_supported
from portico.runtime.sandbox.landlock_exec import ARCHES

METHODS_ENV = "PORTICO_SANDBOX_METHODS"
LINUX_METHODS = ("bwrap", "landlock")
PROBE_TIMEOUT_S = 10.0

Kind = Literal["bwrap", "landlock", "seatbelt"]


@dataclass(frozen=True)
class SandboxMethod:
    """How this machine sandboxes: ``program`` is bwrap or sandbox-exec, ``abi`` the
    kernel's Landlock ABI; ``instead_of`` says why a stronger method is not used."""

    kind: Kind
    program: Path | None = None
    abi: int = 0
    instead_of: str = ""
    overlay: bool = False  # bwrap can mount overlays (0.9 and later): caches are seeded

    @property
    def filters_network(self) -> bool:
        """False for Landlock below ABI 4: it cannot restrict TCP at all."""
        return self.kind != "landlock" or self.abi >= NET_ABI

    @property
    def scopes_signals(self) -> bool:
        """False for Landlock below ABI 6 (Linux before 6.12): the server may signal
        the person's other processes (seccomp cannot tell whose a pid is)."""
        return self.kind != "landlock" or self.abi >= SCOPE_ABI


_answers: dict[str, tuple[SandboxMethod | None, str | None]] = {}


def _unsupported() -> str | None:
    if sys.platform in ("linux", "darwin"):
        return None
    if sys.platform == "win32":
        return "sandboxing servers is not supported on Windows yet"
    return "sandboxing servers is not supported on this system yet (Linux and macOS only)"


def _methods(wanted: str) -> tuple[str, ...] | str:
    names = tuple(name.strip() for name in wanted.split(",") if name.strip())
    unknown = [name for name in names if name not in LINUX_METHODS]
    if unknown or not names:
        return (
            f"{METHODS_ENV}={wanted!r} is not a list of sandbox methods "
            f"(use {', '.join(LINUX_METHODS)}, comma-separated)"
        )
    return names


def _run(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=PROBE_TIMEOUT_S,
        check=False,
    )


# The probes run in a thread, not as asyncio subprocesses: an asyncio subprocess's
# transport is closed by a callback the loop runs after the process is reaped, and a
# loop that stops right after the probe (a one-off CLI command, the app's quit) never
# runs it ("unclosed transport" at the next collection).
async def _bwrap_problem(bwrap: Path) -> str | None:
    try:
        done = await asyncio.to_thread(
            _run, [str(bwrap), "--unshare-all", "--ro-bind", "/", "/", "true"]
        )
    except subprocess.TimeoutExpired:
        return (
            f"this machine cannot set up a sandbox: bwrap did not finish in {PROBE_TIMEOUT_S:g} s"
        )
    if done.returncode == 0:
        return None
    why = done.stdout.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
    return f"this machine cannot set up a sandbox (user namespaces may be off): bwrap said {why!r}"


async def _has_overlay(bwrap: Path) -> bool:
    try:
        done = await asyncio.to_thread(_run, [str(bwrap), "--help"])
    except subprocess.TimeoutExpired:
        return False
    return b"--overlay-src" in done.stdout


async def _linux(names: tuple[str, ...]) -> tuple[SandboxMethod | None, str | None]:
    problems: list[str] = []
    for name in names:
        if name == "bwrap":
            try:
                bwrap = find_bwrap()
            except BwrapUnavailable as exc:
                problems.append(f"no sandbox program: {exc}")
                continue
            problem = await _bwrap_problem(bwrap)
            if problem is None:
                return SandboxMethod("bwrap", bwrap, overlay=await _has_overlay(bwrap)), None
            problems.append(problem)
        else:
            abi = landlock_supported()
            if abi:
                return SandboxMethod("landlock", abi=abi, instead_of="; ".join(problems)), None
            problems.append(_no_landlock())
    return None, "; ".join(problems) or "no sandbox method to try"


def _no_landlock() -> str:
    machine = os.uname().machine
    if machine not in ARCHES:
        return f"Portico's Landlock sandbox supports {' and '.join(ARCHES)} only, not {machine}"
    return "this kernel has no Landlock (Linux 5.13 or later, enabled)"


async def _probe(wanted: str) -> tuple[SandboxMethod | None, str | None]:
    problem = _unsupported()
    if problem:
        return None, problem
    if sys.platform == "darwin":
        from portico.runtime.sandbox.seatbelt import SANDBOX_EXEC

        if not os.access(SANDBOX_EXEC, os.X_OK):
            return None, f"no sandbox program: {SANDBOX_EXEC} is missing"
        return SandboxMethod("seatbelt", Path(SANDBOX_EXEC)), None
    names = _methods(wanted)
    if isinstance(names, str):
        return None, names
    return await _linux(names)


Answer = tuple[SandboxMethod | None, str | None]
# the probe under way, per methods wanted: the gates of a config's 400 servers ask at
# once, and run it once (a task of another loop, one that ended, is not waited for)
_asking: dict[str, asyncio.Task[Answer]] = {}


async def sandbox_method() -> Answer:
    """(the method to use, None) where sandboxes work, else (None, why not)."""
    wanted = os.environ.get(METHODS_ENV, ",".join(LINUX_METHODS))
    if wanted in _answers:
        return _answers[wanted]
    loop = asyncio.get_running_loop()
    task = _asking.get(wanted)
    if task is None or task.get_loop() is not loop:
        task = _asking[wanted] = loop.create_task(_probe(wanted))
    try:
        answer = await asyncio.shield(task)
    finally:
        if task.done() and _asking.get(wanted) is task:
            del _asking[wanted]
    _answers[wanted] = answer
    return answer


def known_method() -> SandboxMethod | None:
    """The method found, if this process has asked already (for the faces, which
    cannot wait for a probe)."""
    wanted = os.environ.get(METHODS_ENV, ",".join(LINUX_METHODS))
    found = _answers.get(wanted)
    return found[0] if found else None


def known_problem() -> str | None:
    """Why this machine cannot sandbox, if this process has asked already and it cannot."""
    wanted = os.environ.get(METHODS_ENV, ",".join(LINUX_METHODS))
    found = _answers.get(wanted)
    return found[1] if found else None


def forget() -> None:
    """Ask again next time (tests)."""
    _answers.clear()
    _asking.clear()
