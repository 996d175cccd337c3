"""What ``portico mcp list`` and ``mcp tools`` show of a hub, as plain JSON-able data.

The same rows come from a hub the command started itself and from a running app's hub
(through the local endpoint), so both paths print the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from portico.config.model import ServerSpec
    from portico.runtime.hub import Hub
    from portico.runtime.registry import Registry
    from portico.runtime.tool_views import ToolView


def audience_marks(view: ToolView | None) -> str:
    """``[view, for views only] `` before a tool's description in ``mcp tools``."""
    if view is None:
        return ""
    marks = [] if view.resource_uri is None else ["view"]
    if not view.for_model:
        marks.append("for views only")
    elif not view.for_app:
        marks.append("for models only")
    return f"[{', '.join(marks)}] " if marks else ""


def server_row(hub: Hub, spec: ServerSpec) -> dict[str, Any]:
    from portico.runtime.events import Status
    from portico.runtime.sandbox.describe import (
        method_note,
        method_word,
        sandbox_badge,
        wants_sandbox,
    )

    conn = hub.connections.get(spec.name)
    state = conn.state if conn is not None else None
    tools = len(hub.registry.server_tools(spec.name))
    status = str(state.status) if state else "Stopped"
    if state is not None and state.status is Status.COOLDOWN:
        status = "Failed"  # it failed; the cooldown only says when it is tried again
    return {
        "name": spec.name,
        "status": status,
        "transport": str(spec.transport),
        "sandbox": sandbox_badge(spec),  # sandboxed | network | off | "" (not a process)
        # how this machine sandboxes it (bwrap | landlock | sandbox-exec | none) and why
        "sandbox_method": method_word() if wants_sandbox(spec) else "",
        "sandbox_why": method_note() if wants_sandbox(spec) else "",
        "tools": tools,
        "source": f"{spec.source} ({spec.source.scope})",
        "error": state.error if state else None,
        "retry_at": state.retry_at if state else None,
    }


def tools_listing(registry: Registry, server: str) -> dict[str, Any]:
    """``mcp tools --json``: the server's tools as the model sees them, what its filters
    hid and the registry's warnings about it."""
    return {
        "server": server,
        "tools": [
            {
                "name": t.qualified,
                "tool": t.tool,
                "description": t.description,
                "input_schema": t.input_schema,
                "annotations": t.annotations,
                "utility": t.utility,
                "digest": t.digest,
                "view": t.view.resource_uri if t.view else None,
                "for_model": t.for_model,
                "for_views": t.for_views,
                "marks": audience_marks(t.view),
            }
            for t in registry.server_tools(server)
        ],
        "filtered_out": [
            {"tool": d.tool, "reason": d.reason} for d in registry.filtered_out(server)
        ],
        "warnings": registry.warnings(server),
    }
