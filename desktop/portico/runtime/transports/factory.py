"""Build the SDK transport for one server: stdio process, Streamable HTTP or legacy SSE.

Every transport comes back wrapped in :class:`WatchedTransport`, whose ``ended`` event is
set when its read stream ends. That is how the owner learns that a legacy SSE server died
(the SDK's SSE reader only closes the stream; nothing raises into the owner).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from portico.config.model import Scope, ServerSpec, Transport
from portico.paths import PROJECT_DIR_NAME
from portico.runtime.errors import CommandNotFound, ConfigProblem, HttpErrorRecorder
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.serverlog import ServerLog

if TYPE_CHECKING:
    from portico.runtime.sandbox.probe import SandboxMethod
    from portico.runtime.transports.stdio import StdioProcessInfo

MAX_SSE_EVENT_BYTES = 10 * 1024 * 1024
RememberSecrets = Callable[[tuple[tuple[str, str], ...], dict[str, str]], None]


class _WatchedReadStream:
    """Delegates to the transport's read stream; notes when it ends."""

    def __init__(self, inner: Any, ended: asyncio.Event) -> None:
        self._inner = inner
        self._ended = ended

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise
        _default_result_type(item)
        return item

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _default_result_type(item: Any) -> None:
    """A result without ``resultType`` is complete (2026-07-28: "Absent resultType is
    equivalent to complete"); the SDK's 2026 models require the field, so say it."""
    message = getattr(getattr(item, "message", None), "result", None)
    if isinstance(message, dict) and "resultType" not in message:
        message["resultType"] = "complete"


class WatchedTransport:
    """An SDK transport whose end of input is observable (``ended``)."""

    def __init__(self, inner: AbstractAsyncContextManager[Any]) -> None:
        import asyncio

        self._inner = inner
        self.ended = asyncio.Event()

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _WatchedReadStream(read, self.ended), write

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)


@dataclass
class BuiltTransport:
    transport: WatchedTransport
    proc: StdioProcessInfo | None  # the stdio child, None for HTTP
    tls: ssl.SSLContext | bool = True  # HTTP: the connection's TLS settings (icons reuse them)


async def server_tls(spec: ServerSpec, hooks: ConnectionHooks) -> ssl.SSLContext | bool:
    """``spec``'s TLS settings (``ca_cert``, ``client_cert`` with its password resolved);
    raises ConfigProblem / SecretProblem naming the key."""
    from portico.runtime.transports.http import tls_context
    from portico.runtime.transports.resolve import resolve_text

    password = None
    if spec.client_cert is not None and spec.client_cert.password:
        password = await resolve_text(
            spec.client_cert.password,
            lookup_keyring=hooks.lookup_secret,
            environ=hooks.environ,
            where=f"{spec.source}: {spec.name}.client_cert.password",
        )
    return tls_context(spec, password)


async def build_transport(
    spec: ServerSpec,
    *,
    hooks: ConnectionHooks,
    stack: AsyncExitStack,
    log: ServerLog,
    recorder: HttpErrorRecorder,
    shell_timeout: float,
    note: Callable[[str], None],
    pinned: Any = None,
    remember_secrets: RememberSecrets | None = None,
    watch_http: Callable[[Any], None] | None = None,
    sandbox_refused: Callable[[str, int, str], None] | None = None,
) -> BuiltTransport:
    """The transport for ``spec`` (raises ConfigProblem / CommandNotFound before any I/O).

    ``remember_secrets(written, resolved)`` learns the values of env / header references
    (to mask them in messages); ``watch_http(client)`` taps the HTTP client (activity);
    ``sandbox_refused(host, port, entry)`` hears of each host the sandbox refused."""
    remember = remember_secrets or (lambda written, resolved: None)
    if spec.transport is Transport.STDIO:
        transport, proc = await _stdio(
            spec, hooks, stack, log, shell_timeout, note, remember, sandbox_refused
        )
        return BuiltTransport(WatchedTransport(transport), proc)
    transport, tls = await _http(spec, hooks, stack, recorder, note, pinned, remember, watch_http)
    return BuiltTransport(WatchedTransport(transport), None, tls)


async def _stdio(
    spec: ServerSpec,
    hooks: ConnectionHooks,
    stack: AsyncExitStack,
    log: ServerLog,
    shell_timeout: float,
    note: Callable[[str], None],
    remember: RememberSecrets,
    refused: Callable[[str, int, str], None] | None = None,
) -> tuple[AbstractAsyncContextManager[Any], StdioProcessInfo]:
    from mcp.client.stdio import get_default_environment

    from portico.runtime.shellpath import (
        find_command,
        login_path_async,
        path_origin,
        relearn_async,
    )
    from portico.runtime.transports.resolve import resolve_pairs
    from portico.runtime.transports.stdio import StdioProcessInfo, stdio_transport

    if spec.command is None:
        raise ConfigProblem(f"{spec.source}: {spec.name}: no command to run")
    if spec.identity_header is not None:
        note("identity_header ignored: identity headers apply to HTTP servers only")
    environ = hooks.environ
    configured = await resolve_pairs(
        spec.env,
        lookup_keyring=hooks.lookup_secret,
        environ=environ,
        where=f"{spec.source}: {spec.name}.env",
    )
    remember(spec.env, configured)
    env_of = environ if environ is not None else os.environ
    path = await login_path_async(environ=env_of, shell_timeout=shell_timeout)
    cwd = checked_cwd(spec)
    origin = f"{spec.name}.env PATH" if "PATH" in configured else path_origin(environ=env_of)
    try:
        command = find_command(
            spec.command, configured.get("PATH", path), cwd=cwd, server=spec.name, origin=origin
        )
    except CommandNotFound:
        # A PATH remembered from an earlier process may predate the command's install.
        if "PATH" in configured or not await relearn_async(
            environ=env_of, shell_timeout=shell_timeout
        ):
            raise
        path = await login_path_async(environ=env_of, shell_timeout=shell_timeout)
        origin = path_origin(environ=env_of)
        command = find_command(spec.command, path, cwd=cwd, server=spec.name, origin=origin)
    env = get_default_environment()
    env["PATH"] = path
    env.update(configured)
    args = list(spec.args)
    if spec.sandboxed:
        command, args = await _sandboxed(spec, hooks, stack, command, args, env, cwd, note, refused)
    info = StdioProcessInfo()
    return stdio_transport(command, args, env=env, cwd=cwd, log=log, info=info), info


async def _sandboxed(
    spec: ServerSpec,
    hooks: ConnectionHooks,
    stack: AsyncExitStack,
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    note: Callable[[str], None],
    refused: Callable[[str, int, str], None] | None = None,
) -> tuple[str, list[str]]:
    """``command args`` wrapped in the server's sandbox (bwrap, else Landlock; on macOS
    sandbox-exec), its proxy for declared hosts closing with ``stack``. Without a
    sandbox on this machine, or with one that cannot filter the network, only once the
    person agreed (else SandboxProblem). ``env`` gains the proxy's and caches' variables."""
    from portico.runtime.errors import SandboxProblem
    from portico.runtime.sandbox.probe import sandbox_method

    method, problem = await sandbox_method()
    if method is None:
        why = problem or "no sandbox"
        if hooks.unsandboxed_ok is not None and await hooks.unsandboxed_ok(spec, why):
            note(f"running without a sandbox, as you agreed: {why}")
            return command, args
        raise SandboxProblem(
            f"{spec.name}: not started: it is to run in a sandbox, and {why}; agree to run "
            f"it unsandboxed when asked, or set {spec.name}.sandbox.enabled = false"
        )
    if not method.filters_network:
        why = (
            f"{method.instead_of or 'bwrap cannot run here'}, and this kernel's Landlock "
            f"(ABI {method.abi}) keeps your files out but cannot filter the network"
        )
        agreed = hooks.unsandboxed_ok is not None and await hooks.unsandboxed_ok(
            spec, why, weaker=NETWORK_NOT_FILTERED
        )
        if not agreed:
            raise SandboxProblem(
                f"{spec.name}: not started: {why}; agree to run it with the network not "
                f"filtered when asked, or set {spec.name}.sandbox.enabled = false"
            )
        note(f"sandbox: Landlock, {NETWORK_NOT_FILTERED}, as you agreed: {why}")
    elif method.kind == "landlock":
        note(
            f"sandbox: Landlock, as {method.instead_of or 'bwrap cannot run here'}: files as "
            "with bwrap; TCP only to its proxy's port, no UDP or raw sockets"
        )
    from portico.runtime.sandbox.launch import links_out
    from portico.runtime.sandbox.loader_env import take_late

    _links_out(spec, await asyncio.to_thread(links_out, spec, args, cwd), cwd, note)
    home = env.get("HOME") or str(Path.home())
    late = take_late(env)  # the loader's variables: for the server only, once ruled
    launch = _Launch(spec, method, stack, command, tuple(args), env, cwd, home, note, refused, late)
    if method.kind == "bwrap":
        return await _in_bwrap(launch)
    return await _without_namespace(launch)


def _links_out(
    spec: ServerSpec,
    found: tuple[tuple[str, str], ...],
    cwd: str | None,
    note: Callable[[str], None],
) -> None:
    """A project server's paths that a link takes out of its project (``found``, a walk
    of the disk made off the loop) are not bound: its Log says which; a cwd so led out
    stops the start (the server could not run there)."""
    from portico.runtime.errors import SandboxProblem
    from portico.runtime.sandbox.launch import links_out_notes

    for line in links_out_notes(spec, found):
        note(line)
    for path, real in found:
        if cwd and path == os.path.normpath(cwd):
            raise SandboxProblem(
                f"{spec.source}: {spec.name}: not started: its cwd {path} leads out of the "
                f"project to {real} (a link), which its sandbox does not show it; "
                "point cwd at a folder in the project"
            )


# What the person is asked to agree to where Landlock cannot restrict TCP.
NETWORK_NOT_FILTERED = "network not filtered: it may reach any host"


@dataclass(frozen=True)
class _Launch:
    """One sandboxed start: the server's resolved command and where it runs, the method
    found, the stack its proxy closes with. ``env`` is the process's own, and gains the
    proxy's and caches' variables."""

    spec: ServerSpec
    method: SandboxMethod
    stack: AsyncExitStack
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    home: str
    note: Callable[[str], None]
    refused: Callable[[str, int, str], None] | None
    late: dict[str, str]  # set for the server once its rules apply (loader_env.py)


async def _in_bwrap(launch: _Launch) -> tuple[str, list[str]]:
    from portico.runtime.sandbox.launch import sandboxed_launch
    from portico.runtime.sandbox.network import open_network

    assert launch.method.program is not None
    net = await open_network(launch.spec, launch.stack, launch.note, launch.refused)
    launch.env.update(net.env)
    argv, extra = await asyncio.to_thread(
        sandboxed_launch,
        launch.spec,
        launch.method.program,
        launch.command,
        launch.args,
        cwd=launch.cwd,
        env=launch.env,
        home=launch.home,
        net=net,
        overlay=launch.method.overlay,
        late=launch.late,
    )
    launch.env.update(extra)
    return argv[0], argv[1:]


async def _without_namespace(launch: _Launch) -> tuple[str, list[str]]:
    """Landlock or sandbox-exec: no namespace, so the bridge to the proxy runs outside the
    rules on a loopback port of this machine, and the rules let TCP reach that port only."""
    import shutil
    import tempfile

    from portico.runtime.sandbox.launch import landlock_launch, seatbelt_launch
    from portico.runtime.sandbox.network import free_port, open_network

    spec, method, env = launch.spec, launch.method, launch.env
    port = free_port()
    net = await open_network(spec, launch.stack, launch.note, launch.refused, port=port)
    env.update(net.env)
    private = await asyncio.to_thread(tempfile.mkdtemp, prefix="portico-sbx-")
    launch.stack.callback(shutil.rmtree, private, True)
    if method.kind == "seatbelt":
        argv, extra = await asyncio.to_thread(
            seatbelt_launch,
            spec,
            launch.command,
            launch.args,
            cwd=launch.cwd,
            env=env,
            home=launch.home,
            private=private,
            proxy_port=port if net.prefix else None,
            late=launch.late,
        )
        argv = [*net.prefix, *argv]
    else:
        # below ABI 4 no TCP rules at all; else only the bridge's port, or nothing
        connect = str(port) if net.prefix else "none"
        if not method.filters_network:
            connect = "any"
        argv, extra = await asyncio.to_thread(
            landlock_launch,
            spec,
            launch.command,
            launch.args,
            cwd=launch.cwd,
            env=env,
            home=launch.home,
            private=private,
            net=net,
            connect=connect,
            late=launch.late,
        )
    env.update(extra)
    return argv[0], argv[1:]


async def _http(
    spec: ServerSpec,
    hooks: ConnectionHooks,
    stack: AsyncExitStack,
    recorder: HttpErrorRecorder,
    note: Callable[[str], None],
    pinned: Any,
    remember: RememberSecrets,
    watch_http: Callable[[Any], None] | None,
) -> tuple[AbstractAsyncContextManager[Any], ssl.SSLContext | bool]:
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    from portico.runtime.transports.http import build_client, identity_header
    from portico.runtime.transports.proxies import ProxySettings
    from portico.runtime.transports.resolve import resolve_pairs

    if not spec.url:
        raise ConfigProblem(f"{spec.source}: {spec.name}: no url to connect to")
    environ = hooks.environ
    headers = await resolve_pairs(
        spec.headers,
        lookup_keyring=hooks.lookup_secret,
        environ=environ,
        where=f"{spec.source}: {spec.name}.headers",
    )
    remember(spec.headers, headers)
    profile = hooks.active_profile() if hooks.active_profile else "default"
    extra, warning = identity_header(spec, headers, profile)
    if warning:
        note(warning)
    if extra is not None:
        headers[extra[0]] = extra[1]
    tls = await server_tls(spec, hooks)
    auth = None
    if hooks.auth_for is not None:
        auth = await hooks.auth_for(spec, interactive=False)
    proxies = ProxySettings.from_environ(environ if environ is not None else os.environ)
    client = build_client(
        spec,
        headers=headers,
        proxies=proxies,
        recorder=recorder,
        auth=auth,
        verify=tls,
        pins=hooks.pinned_addresses(spec) if hooks.pinned_addresses is not None else pinned,
    )
    if watch_http is not None:
        watch_http(client)
    if spec.transport is Transport.SSE:
        # sse_client enters (and closes) the client it gets from the factory.
        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
            return client

        return sse_client(spec.url, httpx_client_factory=factory), tls
    await stack.enter_async_context(client)
    return (
        streamable_http_client(
            spec.url, http_client=client, max_sse_event_size=MAX_SSE_EVENT_BYTES
        ),
        tls,
    )


def _base_folder(spec: ServerSpec) -> tuple[Path, str]:
    """Where an unset or relative ``cwd`` points: (folder, how to say it)."""
    path = spec.source.path
    if spec.source.scope is Scope.PROJECT:
        folder = path.parent
        if folder.name == PROJECT_DIR_NAME:  # <project>/.portico/mcp.toml -> <project>
            folder = folder.parent
        return folder, "the project folder"
    return path.parent, "the folder of the config file"


def checked_cwd(spec: ServerSpec) -> str | None:
    """The stdio server's working folder.

    Unset: the project folder for project servers, the user's home for global ones.
    Relative: against the project folder (project) or the config file's folder (global).
    """
    base, what = _base_folder(spec)
    if not spec.cwd:
        default = base if spec.source.scope is Scope.PROJECT else Path.home()
        return str(default) if default.is_dir() else None
    given = Path(os.path.expanduser(spec.cwd))
    cwd = given if given.is_absolute() else base / given
    if not cwd.is_dir():
        relative = "" if given.is_absolute() else f" ({spec.cwd!r} taken relative to {what})"
        raise ConfigProblem(
            f"{spec.source}: {spec.name}.cwd: folder {cwd} does not exist{relative};"
            " create it or fix cwd"
        )
    return str(cwd)
