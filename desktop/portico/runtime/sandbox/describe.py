"""A server's sandbox in words, the same in every face (review, list, test, Servers)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

from portico.config.model import ServerSpec, Transport
from portico.runtime.sandbox.launch import sandbox_view
from portico.runtime.sandbox.probe import (
    METHODS_ENV,
    SandboxMethod,
    known_method,
    known_problem,
)

# What each method is called where a person reads it.
METHOD_WORDS = {"bwrap": "bwrap", "landlock": "landlock", "seatbelt": "sandbox-exec"}


def sandbox_badge(spec: ServerSpec) -> str:
    """One word for lists: sandboxed, network (sandboxed with allowed hosts), off, or ''
    for a server that is not a local process."""
    if spec.transport is not Transport.STDIO:
        return ""
    if not spec.sandboxed:
        return "off"
    return "network" if spec.sandbox.network_allow or spec.sandbox_learns else "sandboxed"


def wants_sandbox(spec: ServerSpec) -> bool:
    """A local process whose config asks for a sandbox (the faces probe for these)."""
    return spec.transport is Transport.STDIO and spec.sandboxed


def method_word() -> str:
    """How this machine sandboxes, in a word: bwrap, landlock, sandbox-exec, or none;
    '' before anything asked (``probe.sandbox_method``)."""
    method = known_method()
    if method is not None:
        return METHOD_WORDS[method.kind]
    return "none" if known_problem() else ""


def _method_sentence(method: SandboxMethod) -> str:
    if method.kind == "bwrap":
        return (
            f"bwrap ({method.program}): a view of its own, where your files are not there "
            "and the network is only its declared hosts"
        )
    if method.kind == "seatbelt":
        return "sandbox-exec (macOS), with a profile made for each server"
    instead = method.instead_of or f"as {METHODS_ENV} asks"
    signals = "" if method.scopes_signals else "; it can still signal your other processes"
    if not method.filters_network:
        return (
            f"landlock (ABI {method.abi}) instead of bwrap ({instead}): your files kept out, "
            f"but the network not filtered (you are asked first){signals}"
        )
    return (
        f"landlock (ABI {method.abi}) instead of bwrap ({instead}): your files kept out, "
        f"TCP only through the proxy, no UDP{signals}"
    )


def method_note() -> str:
    """The method and why, one sentence ('' before anything asked): what ``mcp list``
    prints under its table and the Servers list's tooltip says."""
    method = known_method()
    if method is not None:
        return _method_sentence(method)
    problem = known_problem()
    if not problem:
        return ""
    return f"none: {problem}; a server to be sandboxed runs only once you agree"


def sandbox_label(spec: ServerSpec) -> str:
    """The badge with the method: sandboxed/bwrap, network/landlock, sandboxed/none (this
    machine cannot), off; the bare badge before the machine was asked."""
    badge = sandbox_badge(spec)
    word = method_word() if wants_sandbox(spec) else ""
    return f"{badge}/{word}" if word else badge


def sandbox_lines(spec: ServerSpec) -> tuple[str, ...]:
    """What the sandbox lets the server do, one rule a line; () for HTTP servers."""
    if spec.transport is not Transport.STDIO:
        return ()
    if not spec.sandboxed:
        return ("no sandbox: it runs with all of your rights (your files, your network)",)
    view = sandbox_view(spec)
    lines = [
        "sandboxed: the system read-only, its own install, a private /tmp, an empty home",
        "may read: " + (", ".join(view.read) if view.read else "nothing else"),
        "may write: " + (", ".join(view.write) if view.write else "nothing (but /tmp)"),
        "may reach: " + (", ".join(view.hosts) if view.hosts else "no network"),
    ]
    if spec.sandbox_learns:
        lines[-1] = "may reach: any host (learn mode: each one not in allow is reported)"
    method = known_method()
    if method is not None and method.kind == "landlock":
        lines[0] = (
            "sandboxed with Landlock (bwrap cannot run here): the system read-only, its own "
            "install, a private tmp and home"
        )
        if not method.filters_network:
            lines[-1] = (
                f"may reach: any host: network not filtered (Landlock ABI {method.abi} "
                "cannot restrict TCP; you are asked first)"
            )
        else:
            lines[-1] += " (TCP only through the proxy; no UDP, no raw sockets)"
    elif method is not None and method.kind == "seatbelt":
        lines[0] = (
            "sandboxed with sandbox-exec: the system read-only, its own install, a private "
            "tmp and home"
        )
    problem = known_problem() if method is None else None
    if problem and sys.platform in ("linux", "darwin"):
        lines.append(f"this machine cannot sandbox it ({problem}): you will be asked first")
    if sys.platform == "win32":
        lines.append("Windows cannot sandbox servers yet (not supported): you will be asked first")
    elif sys.platform not in ("linux", "darwin"):
        lines.append("this system cannot sandbox yet (Linux, macOS): you will be asked first")
    return tuple(lines)


def sandbox_rules(spec: ServerSpec) -> tuple[str, ...]:
    """``sandbox_lines`` and, once a method was found, the method that applies them and
    why that one (the review, ``mcp test``, the Overview); where none was, the lines say
    so already."""
    lines = sandbox_lines(spec)
    if not wants_sandbox(spec) or known_method() is None:
        return lines
    return (*lines, f"method: {method_note()}")


# What a process says when the sandbox kept something from it: a file that is not there,
# a read-only file system, no permission, or no network at all.
_BLOCKED = re.compile(
    r"ENOENT|EACCES|EROFS|EPERM|ENETUNREACH|EAI_AGAIN|ENOTFOUND|ECONNREFUSED"
    r"|No such file or directory|Read-only file system|Permission denied"
    r"|Network is unreachable|Temporary failure in name resolution|Name or service not known"
    r"|getaddrinfo|Connection refused|sandbox: refused a connection",
    re.IGNORECASE,
)
MOST_BLOCKED = 10


def blocked_lines(spec: ServerSpec, log: Iterable[str]) -> list[str]:
    """The server's log lines that read like the sandbox refusing it something (the
    sandbox itself cannot tell: a refused open looks like a missing file)."""
    if not spec.sandboxed:
        return []
    found = [line.strip() for line in log if _BLOCKED.search(line)]
    return list(dict.fromkeys(found))[-MOST_BLOCKED:]
