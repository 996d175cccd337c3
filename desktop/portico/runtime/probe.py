"""Connect one server, look at what it offers, disconnect: the core of ``portico mcp test``.

``probe(spec)`` never prints and never raises for a server that fails to connect: the
result says what happened. ``report_lines(result)`` is the text ``portico mcp test`` prints
(the desktop editor's Test button shows the same lines).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from portico.config.masking import mask_url

if TYPE_CHECKING:
    from portico.config.model import Config, ServerSpec
    from portico.runtime.hooks import ConnectionHooks
    from portico.runtime.hub import Hub

LOG_TAIL = 10


@dataclass
class ProbeResult:
    """What one test connection found. ``ok`` is True when the server reached Running."""

    name: str
    transport: str
    target: str  # URL or command
    status: str  # "Running", "Failed", "Disabled", ...
    ok: bool = False
    disabled: bool = False
    source: str = ""
    error: str | None = None
    http_error: str | None = None  # the last HTTP error response, when the error omits it
    server_name: str | None = None
    server_version: str | None = None
    protocol: str | None = None
    tools: list[str] = field(default_factory=list)
    registered_tools: int = 0
    prompts: list[str] | str = field(default_factory=list)  # a str: "not offered" / "failed: ..."
    resources: list[str] | str = field(default_factory=list)
    connect_ms: float = 0.0
    prompts_ms: float = 0.0
    resources_ms: float = 0.0
    warnings: list[str] = field(default_factory=list)
    log_tail: list[str] = field(default_factory=list)
    sandbox: list[str] = field(default_factory=list)  # its rules, or that it has none
    blocked: list[str] = field(default_factory=list)  # log lines like a sandbox refusal

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


async def probe(
    spec: ServerSpec,
    config: Config | None = None,
    hooks: ConnectionHooks | None = None,
) -> ProbeResult:
    """Connect ``spec`` alone (lazy is ignored), list what it offers, then close it."""
    from portico.config.model import Config as ConfigCls
    from portico.runtime.hooks import ConnectionHooks
    from portico.runtime.hub import Hub

    spec = replace(spec, lazy=False)
    base = config or ConfigCls()
    # lazy=False changes the digest: writing the cache would delete the real entry
    hub = Hub(hooks=replace(hooks or ConnectionHooks(), write_schema_cache=False))
    try:
        started = time.perf_counter()
        await hub.apply(replace(base, servers=(spec,)))
        connect_s = time.perf_counter() - started
        return await describe_connection(hub, spec.name, connect_s)
    finally:
        await hub.close()


async def describe_connection(hub: Hub, name: str, connect_s: float = 0.0) -> ProbeResult:
    """What ``mcp test`` reports about the hub's connection ``name`` as it is now (the
    probe's own, or a running app's live one, then ``connect_s`` is 0)."""
    from portico.runtime.events import Status
    from portico.runtime.sandbox.describe import blocked_lines, sandbox_rules

    conn = hub.connection(name)
    spec = conn.spec
    state = conn.state
    result = ProbeResult(
        name=spec.name,
        transport=str(spec.transport),
        target=mask_url(spec.url) if spec.url else str(spec.command),
        status="Failed" if state.status is Status.COOLDOWN else str(state.status),
        source=str(spec.source),
        connect_ms=connect_s * 1000,
        sandbox=list(sandbox_rules(spec)),
    )
    if state.status is Status.DISABLED:
        result.disabled = True
        return result
    if state.status is not Status.RUNNING:
        result.error = state.error or "not running"
        http = _last_http_error(conn)
        if http and http not in (state.error or ""):
            result.http_error = http
        result.log_tail = _log_tail(conn)
        result.blocked = blocked_lines(spec, _log_tail(conn, 1000))
        return result
    result.ok = True
    info = conn.server_info
    result.server_name = getattr(info, "name", None) or "(no name given)"
    result.server_version = getattr(info, "version", None)
    result.protocol = str(conn.protocol_version)
    result.tools = [tool.name for tool in conn.tools]
    result.registered_tools = sum(not t.utility for t in hub.registry.server_tools(spec.name))
    t0 = time.perf_counter()
    result.prompts = _names(await _safe_list(conn.list_prompts, conn.capabilities, "prompts"))
    result.prompts_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    resources = await _safe_list(conn.list_resources, conn.capabilities, "resources")
    result.resources = _names(resources, key="uri")
    result.resources_ms = (time.perf_counter() - t0) * 1000
    result.warnings = list(hub.registry.warnings(spec.name))
    result.blocked = blocked_lines(spec, _log_tail(conn, 1000))
    return result


def report_lines(result: ProbeResult) -> list[str]:
    """The lines ``portico mcp test`` prints for ``result``."""
    lines = [
        f"server:    {result.name} ({result.transport}, {result.target})",
        f"status:    {result.status}",
    ]
    if result.disabled:
        lines.append(
            f"error:     disabled in the config ({result.source}): set enabled = true first"
        )
        return lines
    lines.extend(_sandbox_report(result))
    if not result.ok:
        lines.append(f"error:     {result.error}")
        if result.http_error:
            lines.append(f"http:      {result.http_error}")
        lines.append(f"timings:   gave up after {result.connect_ms:.0f} ms")
        # The error already quotes a crashed server's stderr tail (its traceback): the
        # log lines add only what it does not say.
        error = result.error or ""
        tail = [
            line
            for line in result.log_tail
            if not (line.strip() and (line.strip() in error or error in line))
        ]
        if tail:
            lines.append("last log lines:")
            lines.extend(f"  {line}" for line in tail)
        return lines
    name = result.server_name
    lines.append(
        f"info:      {name} {result.server_version}"
        if result.server_version
        else f"info:      {name}"
    )
    lines.append(f"protocol:  {result.protocol}")
    lines.append(f"tools:     {len(result.tools)} offered, {result.registered_tools} registered")
    lines.extend(f"  - {tool}" for tool in result.tools)
    lines.extend(_list_lines("prompts", result.prompts))
    lines.extend(_list_lines("resources", result.resources))
    lines.append(
        f"timings:   connect {result.connect_ms:.0f} ms, prompts {result.prompts_ms:.0f} ms, "
        f"resources {result.resources_ms:.0f} ms"
    )
    lines.extend(f"warning:   {warning}" for warning in result.warnings)
    return lines


def _sandbox_report(result: ProbeResult) -> list[str]:
    lines = [f"sandbox:   {line}" for line in result.sandbox[:1]]
    lines += [f"           {line}" for line in result.sandbox[1:]]
    if result.blocked:
        lines.append(
            "sandbox may have blocked (its log says; widen sandbox.read, write or network.allow):"
        )
        lines += [f"  {line}" for line in result.blocked]
    return lines


async def _safe_list(fetch: Any, capabilities: Any, key: str) -> list[Any] | str:
    if capabilities is not None and getattr(capabilities, key, None) is None:
        return "not offered"
    try:
        result = await fetch()
    except Exception as exc:
        from portico.runtime.errors import describe

        return f"failed: {describe(exc)}"
    items = result if isinstance(result, list) else getattr(result, key, [])
    return list(items)


def _names(items: list[Any] | str, key: str = "name") -> list[str] | str:
    if isinstance(items, str):
        return items
    return [str(getattr(item, key, item)) for item in items]


def _list_lines(label: str, items: list[str] | str) -> list[str]:
    if isinstance(items, str):
        return [f"{label + ':':<10} {items}"]
    return [f"{label + ':':<10} {len(items)}", *(f"  - {item}" for item in items)]


def _last_http_error(conn: Any) -> str | None:
    """The last HTTP error response the connection saw (status, method, URL, body start).

    The SDK sometimes reduces it to a reason phrase ("Not Found"); `mcp test` promises
    the full error. ``conn`` may be any object (a test double), hence getattr.
    """
    recorder = getattr(getattr(conn, "link", None), "recorder", None)  # connection_session
    last = getattr(recorder, "last", None)
    return last.describe() if last is not None else None


def _log_tail(conn: Any, n: int = LOG_TAIL) -> list[str]:
    log = getattr(conn, "log", None)
    if log is None:
        return []
    lines = getattr(log, "lines", None)
    try:
        items = list(lines() if callable(lines) else (lines if lines is not None else log))
    except TypeError:
        return []
    return [str(getattr(x, "text", x)) for x in items[-n:]]
