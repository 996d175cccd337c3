"""Plain copies of what the server pages show, taken on the runtime thread.

Every function here runs on the runtime loop (called through ``RuntimeThread.submit``)
and returns frozen dataclasses of plain values (str, dicts deep-copied, bytes), so the
GUI thread never touches a hub object. No Qt here.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from portico.runtime.connection import Connection
    from portico.runtime.hub import Hub

ANNOTATION_BADGES = (
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open-world"),
)


@dataclass(frozen=True)
class ServerDetails:
    name: str
    status: str
    transport: str
    target: str  # the command line or the URL
    source: str  # file:line
    scope: str
    error: str | None = None
    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    instructions: str | None = None
    connected_at: float | None = None  # time.time()
    connect_seconds: float | None = None
    last_call_at: float | None = None  # time.time() of the last call made from the app
    from_cache: bool = False
    sandbox: tuple[str, ...] = ()  # its sandbox's rules, one a line (stdio servers)


@dataclass(frozen=True)
class ToolInfo:
    name: str
    qualified: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)
    title: str | None = None
    filtered_reason: str | None = None  # set: filtered out, not callable
    utility: bool = False
    asks_approval: bool = True  # a call may ask the person first (not read-only, …)
    icon: str | None = None  # its announced icon, a file in the icon cache (runtime/icons.py)
    view: str | None = None  # MCP Apps: the ui:// view its results are shown in
    for_model: bool = True  # False: its server offers it to the server's views only

    @property
    def badges(self) -> list[str]:
        return [label for key, label in ANNOTATION_BADGES if self.annotations.get(key) is True]


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    name: str
    title: str | None
    description: str
    arguments: tuple[PromptArgument, ...] = ()
    icon: str | None = None  # its announced icon (a file in the icon cache)


@dataclass(frozen=True)
class ResourceInfo:
    uri: str  # for a template: the uriTemplate
    name: str
    description: str = ""
    mime_type: str | None = None
    template: bool = False
    icon: str | None = None  # its announced icon (a file in the icon cache)


def _plain(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return copy.deepcopy(value)
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dict(dump(mode="json", by_alias=True, exclude_none=True))
    return {}


def _target(conn: Connection) -> str:
    from portico.policy.trust import describe_target

    return describe_target(conn.spec)  # a URL's password never reaches the screen


def _sandbox(spec: Any) -> tuple[str, ...]:
    from portico.runtime.sandbox.describe import sandbox_rules

    return sandbox_rules(spec)


def server_details(hub: Hub, name: str, last_calls: dict[str, float]) -> ServerDetails:
    conn = hub.connection(name)
    spec = conn.spec
    state = conn.state
    info = conn.server_info
    return ServerDetails(
        name=name,
        status=str(state.status),
        transport=str(spec.transport),
        target=_target(conn),
        source=str(spec.source),
        scope=str(spec.source.scope),
        error=state.error,
        protocol_version=conn.protocol_version,
        server_name=getattr(info, "name", None),
        server_version=getattr(info, "version", None),
        instructions=conn.instructions,
        connected_at=conn.connected_at,
        connect_seconds=conn.connect_seconds,
        last_call_at=max(
            (t for t in (last_calls.get(name), conn.activity.health.last_call_at) if t),
            default=None,
        ),
        from_cache=conn.from_cache,
        sandbox=_sandbox(spec),
    )


def server_tools(hub: Hub, name: str) -> list[ToolInfo]:
    """The server's tools, the filtered-out ones (with their reason), then the utility
    tools Portico adds so models can reach the server's prompts and resources."""
    from portico.policy.approvals import approval_reason

    spec = hub.registry.spec(name)
    off = getattr(hub.settings, "approvals_mode", "") == "off"

    def asks(annotations: dict[str, Any] | None) -> bool:
        if spec is None:
            return True
        return approval_reason(spec, annotations, skip_trust_prompts=off) is not None

    conn = hub.connections.get(name)
    icons = conn.icons.tools if conn is not None else {}
    out = [
        ToolInfo(
            name=t.tool,
            qualified=t.qualified,
            description=t.description or "",
            input_schema=copy.deepcopy(t.input_schema or {}),
            annotations=copy.deepcopy(t.annotations or {}),
            title=t.title,
            utility=t.utility,
            asks_approval=asks(t.annotations),
            icon=None if t.utility else icons.get(t.tool),
            view=t.view.resource_uri if t.view is not None else None,
            for_model=t.for_model,
        )
        for t in hub.registry.server_tools(name)
    ]
    utilities = [t for t in out if t.utility]
    out = [t for t in out if not t.utility]
    offered = {t.name: t for t in (conn.tools if conn is not None else [])}
    for decision in hub.registry.filtered_out(name):
        tool = offered.get(decision.tool)
        out.append(
            ToolInfo(
                name=decision.tool,
                qualified="",
                description=getattr(tool, "description", None) or "",
                input_schema=_plain(getattr(tool, "input_schema", None)),
                annotations=_plain(getattr(tool, "annotations", None)),
                title=getattr(tool, "title", None),
                filtered_reason=decision.reason or "filtered out by tools.include / exclude",
            )
        )
    return out + utilities


def _offers(conn: Connection, capability: str) -> bool:
    """False only when the server said what it offers and ``capability`` is not in it."""
    caps = conn.capabilities
    return caps is None or getattr(caps, capability, None) is not None


async def server_prompts(hub: Hub, name: str) -> list[PromptInfo]:
    conn = hub.connection(name)
    if not _offers(conn, "prompts"):
        return []
    prompts = await conn.list_prompts() if conn.state.status.value == "Running" else conn.prompts
    out: list[PromptInfo] = []
    for p in prompts or []:
        args = tuple(
            PromptArgument(a.name, a.description or "", bool(a.required))
            for a in (getattr(p, "arguments", None) or [])
        )
        out.append(
            PromptInfo(
                p.name,
                getattr(p, "title", None),
                p.description or "",
                args,
                icon=conn.icons.prompts.get(p.name),
            )
        )
    return out


async def server_resources(hub: Hub, name: str) -> list[ResourceInfo]:
    conn = hub.connection(name)
    if not _offers(conn, "resources"):
        return []
    resources = (
        await conn.list_resources() if conn.state.status.value == "Running" else conn.resources
    )
    out = [
        ResourceInfo(
            str(r.uri),
            r.name,
            getattr(r, "description", None) or "",
            getattr(r, "mime_type", None),
            icon=conn.icons.resources.get(str(r.uri)),
        )
        for r in resources or []
    ]
    for t in conn.resource_templates or []:
        out.append(
            ResourceInfo(
                str(t.uri_template),
                t.name,
                getattr(t, "description", None) or "",
                getattr(t, "mime_type", None),
                template=True,
                icon=conn.icons.resources.get(str(t.uri_template)),
            )
        )
    return out


def now() -> float:
    return time.time()
