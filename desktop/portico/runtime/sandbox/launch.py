"""A sandboxed stdio server's launch: what it may see, and the command line that runs it.

``sandboxed_launch`` (bwrap), ``landlock_launch`` (Linux without bwrap) and
``seatbelt_launch`` (macOS) turn a server's resolved command into an argv. With bwrap: the system
read-only (``bwrap.SYSTEM_DIRS``), its install and caches (``installs``), its project
(project servers) or roots (global ones) and its cwd read-only, ``sandbox.read`` read-only,
``sandbox.write`` writable, a private /tmp and an empty home at the person's home path;
no network but the declared hosts through the bridge (``network``). The package caches
it writes are its own (``caches``), never the person's. For a project server, a path in
its project that a link takes out of it (``links_out``) is not bound: its project is
readable anyway, so its review says nothing of such a path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from portico.config.model import Scope, ServerSpec
from portico.config.sandbox_paths import base_folder, leads_out, resolved
from portico.runtime.sandbox.bwrap import BwrapPlan
from portico.runtime.sandbox.caches import PrivateCache, overlay_args, private_caches
from portico.runtime.sandbox.installs import SCRIPT_SUFFIXES, install_needs
from portico.runtime.sandbox.landlock import landlock_argv
from portico.runtime.sandbox.network import SandboxNet
from portico.runtime.sandbox.seatbelt import seatbelt_argv, seatbelt_profile


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


def links_out(
    spec: ServerSpec, args: Sequence[str], cwd: str | None
) -> tuple[tuple[str, str], ...]:
    """A project server's paths in its project that lead out of it through a link, each
    with where it really leads: its ``sandbox.read`` / ``write`` entries, the scripts it
    is handed, its cwd. None of them is bound (``launch_paths``)."""
    if spec.source.scope is not Scope.PROJECT:
        return ()
    project = str(base_folder(spec))
    scripts = [
        os.path.join(cwd or project, os.path.expanduser(arg))
        for arg in args
        if arg.endswith(SCRIPT_SUFFIXES)
    ]
    given = (*resolved(spec, (*spec.sandbox.read, *spec.sandbox.write)), *scripts)
    out: dict[str, str] = {}
    for path in (*given, *((cwd,) if cwd else ())):
        real = leads_out(os.path.normpath(path), project)
        if real is not None and os.path.exists(real):
            out.setdefault(os.path.normpath(path), real)
    return tuple(out.items())


def links_out_notes(spec: ServerSpec, found: Sequence[tuple[str, str]]) -> list[str]:
    """The server's Log lines for what ``links_out`` found."""
    return [
        f"sandbox: not bound: {path} leads out of the project to {real}; to let it read "
        f"{real}, name that path in {spec.name}.sandbox.read (its review will show it)"
        for path, real in found
    ]


@dataclass(frozen=True)
class LaunchPaths:
    """What the launch binds: read-only paths, writable ones, the server's own caches."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    caches: tuple[PrivateCache, ...]
    cache_env: tuple[tuple[str, str, str], ...]


def launch_paths(
    spec: ServerSpec,
    executable: str,
    args: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    home: str,
    net: SandboxNet,
) -> LaunchPaths:
    """Its install, work and ``sandbox.read`` (read-only), ``sandbox.write``, and a
    private layer for each package cache it writes (``caches``)."""
    view = sandbox_view(spec)
    confined = str(base_folder(spec)) if spec.source.scope is Scope.PROJECT else None
    needs = install_needs(executable, args, cwd=cwd, env=env, home=home, confined=confined)
    out = {path for path, _ in links_out(spec, args, cwd)}
    read = [p for p in dict.fromkeys((*needs.read, *view.read, *net.read)) if p not in out]
    if cwd and os.path.normpath(cwd) not in (os.path.normpath(home), *out):
        read.append(cwd)
    write = tuple(p for p in view.write if p not in out)
    caches = private_caches(spec, needs.write)
    return LaunchPaths(tuple(read), write, caches, needs.cache_env)


def cache_env(paths: LaunchPaths) -> dict[str, str]:
    """Without an overlay: the variables that point each tool at the server's own cache."""
    upper = {cache.real: cache.upper for cache in paths.caches}
    env: dict[str, str] = {}
    for real, name, sub in paths.cache_env:
        folder = upper[os.path.normpath(real)]
        if sub:
            folder = os.path.join(folder, sub)
            os.makedirs(folder, exist_ok=True)
        env[name] = folder
    return env


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
    overlay: bool = True,
    late: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The bwrap argv that runs ``executable args`` in ``spec``'s sandbox (behind the
    network bridge when ``net`` has one), and the variables to add to its env (the
    caches' when ``overlay`` is False: this bwrap has none)."""
    net = net or SandboxNet()
    paths = launch_paths(spec, executable, args, cwd=cwd, env=env, home=home, net=net)
    plan = BwrapPlan(home=home, read=paths.read, write=paths.write)
    argv = plan.argv(bwrap, [*net.prefix, executable, *args])
    at = argv.index("--")
    if overlay:
        argv[at:at] = overlay_args(paths.caches)
        extra: dict[str, str] = {}
    else:
        extra = cache_env(paths)
        argv[at:at] = [arg for c in paths.caches for arg in ("--bind", c.upper, c.upper)]
    if cwd:
        at = argv.index("--")
        argv[at:at] = ["--chdir", cwd]
    at = argv.index("--")
    argv[at:at] = [arg for name, value in (late or {}).items() for arg in ("--setenv", name, value)]
    return argv, extra


def _private_home(private: str) -> dict[str, str]:
    """A home and a tmp of the server's own under ``private`` (made here), as env."""
    own_home, own_tmp = os.path.join(private, "home"), os.path.join(private, "tmp")
    for folder in (own_home, own_tmp):
        os.makedirs(folder, exist_ok=True)
    return {"HOME": own_home, "TMPDIR": own_tmp, "TMP": own_tmp, "TEMP": own_tmp}


def landlock_launch(
    spec: ServerSpec,
    executable: str,
    args: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    home: str,
    private: str,
    net: SandboxNet,
    connect: str,
    late: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The argv that runs ``executable args`` under Landlock rules, and the variables to
    add to its env: ``private`` (a fresh folder) holds its home and tmp, the package
    caches are its own (no overlay here), TCP is ``connect`` (``landlock_exec --net``).
    The network bridge, if any, runs first and outside the rules."""
    paths = launch_paths(spec, executable, args, cwd=cwd, env=env, home=home, net=net)
    extra = {**cache_env(paths), **_private_home(private)}
    write = (*paths.write, *(c.upper for c in paths.caches), private)
    command = landlock_argv(
        sys.executable,
        [executable, *args],
        read=paths.read,
        write=write,
        net=connect,
        setenv=late or {},
    )
    return [*net.prefix, *command], extra


def seatbelt_launch(
    spec: ServerSpec,
    executable: str,
    args: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    home: str,
    private: str,
    proxy_port: int | None,
    late: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """macOS: ``sandbox-exec -p PROFILE executable args`` and the env to add, as for
    Landlock (a private home and tmp under ``private``, its own caches); the proxy, if
    any, listens on 127.0.0.1:``proxy_port``. Paths are resolved: SBPL matches real
    paths (/tmp is /private/tmp there)."""
    paths = launch_paths(spec, executable, args, cwd=cwd, env=env, home=home, net=SandboxNet())
    extra = {**cache_env(paths), **_private_home(private)}
    real = os.path.realpath
    read = [real(p) for p in paths.read]
    write = [real(p) for p in (*paths.write, *(c.upper for c in paths.caches), private)]
    profile = seatbelt_profile(read, write, proxy_port=proxy_port)
    # sandbox-exec applies the profile, then /usr/bin/env sets the loader's variables
    assignments = [f"{name}={value}" for name, value in (late or {}).items()]
    command = (
        ["/usr/bin/env", *assignments, executable, *args] if assignments else [executable, *args]
    )
    return seatbelt_argv(profile, command), extra
