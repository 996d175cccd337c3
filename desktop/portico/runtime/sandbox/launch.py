"""A sandboxed stdio server's launch: what it may see, and the bwrap command line.

``sandboxed_launch`` turns a server's resolved command into the bwrap argv: the system
read-only (``bwrap.SYSTEM_DIRS``), its install and caches (``installs``), its project
(project servers) or roots (global ones) and its cwd read-only, ``sandbox.read`` read-only,
``sandbox.write`` writable, a private /tmp and an empty home at the person's home path;
no network but the declared hosts through the bridge (``network``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from portico.config.model import Scope, ServerSpec
from portico.config.sandbox_paths import base_folder, resolved
from portico.runtime.sandbox.bwrap import BwrapPlan
from portico.runtime.sandbox.installs import install_needs
from portico.runtime.sandbox.network import SandboxNet


@dataclass(frozen=True)
class SandboxView:
    """What one server's sandbox lets it see (before its install is known)."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    hosts: tuple[str, ...]


def sandbox_view(spec: ServerSpec) -> SandboxView:
    """The folders and hosts a server's config gives its sandbox: its project (project
    servers) or roots (global ones), ``sandbox.read`` / ``write`` / ``network.allow``."""
    read: list[str] = []
    if spec.source.scope is Scope.PROJECT:
        read.append(str(base_folder(spec)))
    else:
        read += resolved(spec, spec.roots or ())
    read += resolved(spec, spec.sandbox.read)
    return SandboxView(
        read=tuple(dict.fromkeys(read)),
        write=resolved(spec, spec.sandbox.write),
        hosts=spec.sandbox.network_allow,
    )


def sandboxed_launch(
    spec: ServerSpec,
    bwrap: Path,
    executable: str,
    args: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    home: str,
    net: SandboxNet | None = None,
) -> list[str]:
    """The bwrap argv that runs ``executable args`` in ``spec``'s sandbox (behind the
    network bridge when ``net`` has one)."""
    net = net or SandboxNet()
    view = sandbox_view(spec)
    needs = install_needs(executable, args, cwd=cwd, env=env, home=home)
    for folder in needs.write:
        os.makedirs(folder, exist_ok=True)  # a cache bound in must exist to be shared
    read = list(dict.fromkeys((*needs.read, *view.read, *net.read)))
    if cwd and os.path.normpath(cwd) != os.path.normpath(home):
        read.append(cwd)
    plan = BwrapPlan(home=home, read=read, write=(*needs.write, *view.write))
    argv = plan.argv(bwrap, [*net.prefix, executable, *args])
    if cwd:
        at = argv.index("--")
        argv[at:at] = ["--chdir", cwd]
    return argv
