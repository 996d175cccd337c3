"""The Linux fallback where bwrap cannot run: Landlock rules applied before exec.

Landlock cannot give a private /tmp or an empty home, and sees no host names: what it does
is refuse every file access outside the paths it is given, for the process and all its
children, with no privilege and no namespace. System directories are readable and
executable, /dev readable and writable (null, tty, urandom), `read` paths readable,
`write` paths readable and writable; anything else (the person's home included) fails with
EACCES. TCP can be shut off or limited to some ports where the kernel has ABI 4, and then
a seccomp filter refuses every socket that is not TCP (or netlink). In every mode the
person's other processes are out of reach: no signals or abstract sockets outside the
sandbox (ABI 6 scopes), no Unix socket where Landlock cannot govern named ones (below 9).

The rules are applied by ``landlock_exec.py``, a stand-alone file run before the server:

    python -I -S landlock_exec.py --read P --write P [--net MODE] -- CMD
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from portico.runtime.sandbox.bwrap import SYSTEM_DIRS
from portico.runtime.sandbox.landlock_exec import (
    ABI_CAP_ENV,
    EXEC_SCRIPT,
    NET_ABI,
    SCOPE_ABI,
    landlock_abi,
    parse_net,
)

# Imported rather than run as a script, so its compiled form is reused (compiling it each
# launch cost ~3.8 ms); the folder goes last on the path, shadowing nothing.
_BOOT = (
    f"import sys; sys.path.append({os.path.dirname(EXEC_SCRIPT)!r}); "
    "from landlock_exec import main; sys.exit(main(sys.argv[1:]))"
)

__all__ = [
    "ABI_CAP_ENV",
    "NET_ABI",
    "SCOPE_ABI",
    "landlock_argv",
    "landlock_supported",
    "parse_net",
]


def landlock_supported() -> int:
    """The kernel's Landlock ABI version (or less, where ``PORTICO_LANDLOCK_ABI_MAX``
    asks), or 0 where there is none, not Linux, or an architecture the launcher's seccomp
    filter does not know."""
    try:
        return landlock_abi()
    except OSError:
        return 0


def landlock_argv(
    python: str,
    command: Sequence[str],
    *,
    read: Sequence[str] = (),
    write: Sequence[str] = (),
    net: str = "any",
    setenv: Mapping[str, str] | None = None,
) -> list[str]:
    """The argv that runs `command` under the rules: the system directories and /proc
    readable, and `read` / `write`. `-I -S` keeps the server's PYTHONPATH and the
    interpreter's site out of the launcher, which needs only the standard library (and
    cannot import Portico: nothing of it is on that path)."""
    args = [python, "-I", "-S", "-c", _BOOT]
    for path in (*SYSTEM_DIRS, "/proc", *read):
        args += ["--read", path]
    for path in write:
        args += ["--write", path]
    if net != "any":
        args += ["--net", net]
    for name, value in (setenv or {}).items():
        args += ["--setenv", f"{name}={value}"]
    return [*args, "--", *command]
