"""macOS: the ``sandbox-exec`` profile (SBPL) for a sandboxed server, as a pure function.

Deny by default; read the system folders (``SYSTEM_READ``) and the paths the server's
sandbox gives it; read and write its ``write`` paths and its private tmp and home (the
caller makes those, empty, and passes them as write paths); no network, or only the
filtering proxy on 127.0.0.1:``proxy_port`` (``HTTP(S)_PROXY`` point there, as on
Linux; macOS has no network namespace, so the proxy listens on TCP there). Not launched
yet: the launch on darwin is to come; this is the profile it will hand to
``sandbox-exec -p``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

# What any process needs to start on macOS (the dynamic linker's caches are under
# /System and /usr, frameworks under /Library, /etc is /private/etc).
SYSTEM_READ = (
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db/dyld",
    "/opt",
    "/dev",
)

# Device files a process may write: its terminal and the null device.
DEVICES_WRITE = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")


def _quoted(path: str) -> str:
    """``path`` as an SBPL string: absolute, no control characters, \\ and " escaped."""
    if not PurePosixPath(path).is_absolute():
        raise ValueError(f"sandbox profile: {path!r} is not an absolute path")
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in path):
        raise ValueError(f"sandbox profile: {path!r} holds a control character")
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpaths(paths: Sequence[str]) -> str:
    return " ".join(f"(subpath {_quoted(p)})" for p in dict.fromkeys(paths))


def seatbelt_profile(
    read: Sequence[str], write: Sequence[str], *, proxy_port: int | None = None
) -> str:
    """The profile: ``read`` paths read-only, ``write`` paths read-write (both absolute,
    followed by the caller: SBPL matches resolved paths), the network only to the proxy."""
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-fork process-exec)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow ipc-posix-shm)",
        "(allow file-read-metadata)",
        '(allow file-read* (literal "/"))',
        f"(allow file-read* {_subpaths(SYSTEM_READ)})",
        "(allow file-write* " + " ".join(f"(literal {_quoted(d)})" for d in DEVICES_WRITE) + ")",
    ]
    if read:
        lines.append(f"(allow file-read* {_subpaths(read)})")
    if write:
        lines.append(f"(allow file-read* file-write* {_subpaths(write)})")
    if proxy_port is not None:
        if not 0 < proxy_port < 65536:
            raise ValueError(f"sandbox profile: proxy port {proxy_port} is not a port")
        lines.append(f'(allow network-outbound (remote ip "localhost:{proxy_port}"))')
    return "\n".join(lines) + "\n"


def seatbelt_argv(profile: str, command: Sequence[str]) -> list[str]:
    """``command`` run under ``profile``."""
    return [SANDBOX_EXEC, "-p", profile, *command]
