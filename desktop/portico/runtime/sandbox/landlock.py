"""The Linux fallback where bwrap cannot run: Landlock rules applied before exec.

Landlock cannot give a private /tmp or an empty home, and sees no host names: what it does
is refuse every file access outside the paths it is given, for the process and all its
children, with no privilege and no namespace. System directories are readable and
executable, /dev readable and writable (null, tty, urandom), `read` paths readable,
`write` paths readable and writable; anything else (the person's home included) fails with
EACCES. TCP can be shut off or limited to some ports where the kernel has ABI 4.

    python -m portico.runtime.sandbox.landlock_exec --read P --write P [--net MODE] -- CMD
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from portico.runtime.sandbox.bwrap import SYSTEM_DIRS

EXEC_MODULE = "portico.runtime.sandbox.landlock_exec"
_PORTICO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
_BOOT = (
    "import sys; sys.path.insert(0, {root!r}); "
    "from {module} import main; sys.exit(main(sys.argv[1:]))"
)
ABI_CAP_ENV = "PORTICO_LANDLOCK_ABI_MAX"
# TCP rules came with ABI 4 (Linux 6.7).
NET_ABI = 4


class LandlockUnavailable(RuntimeError):
    """The kernel has no Landlock (or not the ABI a rule needs)."""


def landlock_supported() -> int:
    """The kernel's Landlock ABI version, or 0 where there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        import landlockpy
    except ImportError:
        return 0
    try:
        abi = landlockpy.abi_version()
    except OSError:
        return 0
    # An older kernel's answer, asked for (tests of the fallback below ABI 4 use it).
    cap = os.environ.get(ABI_CAP_ENV, "")
    return min(abi, int(cap)) if cap.isdigit() else abi


def landlock_argv(
    python: str,
    command: Sequence[str],
    *,
    read: Sequence[str] = (),
    write: Sequence[str] = (),
    net: str = "any",
) -> list[str]:
    """The argv that runs `command` under the rules. `python` needs landlockpy; this
    Portico is found by path (`-I` keeps the server's PYTHONPATH out of the wrapper)."""
    args = [python, "-I", "-c", _BOOT.format(root=_PORTICO_ROOT, module=EXEC_MODULE)]
    for path in read:
        args += ["--read", path]
    for path in write:
        args += ["--write", path]
    if net != "any":
        args += ["--net", net]
    return [*args, "--", *command]


def parse_net(mode: str) -> tuple[int, ...] | None:
    """`any` -> None (TCP not restricted); `none` -> (); `443,8080` -> the ports TCP may
    connect to. Raises ValueError for anything else."""
    if mode == "any":
        return None
    if mode == "none":
        return ()
    ports = []
    for part in mode.split(","):
        if not part.strip().isdigit() or not 0 < int(part) < 65536:
            raise ValueError(f"--net takes any, none or ports like 443,8080; got {mode!r}")
        ports.append(int(part))
    return tuple(ports)


def restrict(
    read: Sequence[str], write: Sequence[str], connect: tuple[int, ...] | None = None
) -> int:
    """Apply the rules to this thread and every process it starts; returns the ABI used.

    A path that does not exist is skipped (like bwrap's `--ro-bind-try`). Raises
    LandlockUnavailable rather than run with less than was asked for.
    """
    abi = landlock_supported()
    if abi == 0:
        raise LandlockUnavailable("this kernel has no Landlock (Linux 5.13 or later, enabled)")
    if connect is not None and abi < NET_ABI:
        raise LandlockUnavailable(
            f"this kernel's Landlock (ABI {abi}) cannot restrict TCP; it needs ABI {NET_ABI}"
        )
    from landlockpy import AccessFS, AccessNet, Ruleset

    run = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE
    devices = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.WRITE_FILE | AccessFS.IOCTL_DEV
    # Everything but making device nodes.
    change = (
        AccessFS.WRITE_FILE
        | AccessFS.REMOVE_DIR
        | AccessFS.REMOVE_FILE
        | AccessFS.MAKE_DIR
        | AccessFS.MAKE_REG
        | AccessFS.MAKE_SOCK
        | AccessFS.MAKE_FIFO
        | AccessFS.MAKE_SYM
        | AccessFS.REFER
        | AccessFS.TRUNCATE
    )
    handled_net = AccessNet.NONE if connect is None else AccessNet.BIND_TCP | AccessNet.CONNECT_TCP
    with Ruleset(handled_net=handled_net) as rules:
        grants = [(path, run) for path in (*SYSTEM_DIRS, "/proc")]
        grants.append(("/dev", devices))
        grants += [(path, run) for path in read]
        grants += [(path, run | change) for path in write]
        # a file takes only file rights (Landlock refuses a directory right on it)
        on_file = (
            AccessFS.EXECUTE
            | AccessFS.READ_FILE
            | AccessFS.WRITE_FILE
            | AccessFS.TRUNCATE
            | AccessFS.IOCTL_DEV
        )
        for path, access in grants:
            try:
                if not os.path.isdir(path):
                    access &= on_file
                rules.allow_path(path, access)
            except FileNotFoundError:
                continue
        for port in connect or ():
            rules.allow_port(port, AccessNet.CONNECT_TCP)
        rules.restrict()
    return abi


def exec_restricted(
    command: Sequence[str],
    read: Sequence[str],
    write: Sequence[str],
    connect: tuple[int, ...] | None = None,
) -> None:
    """Restrict, then replace this process with `command` (returns only by raising)."""
    restrict(read, write, connect)
    os.execvp(command[0], list(command))
