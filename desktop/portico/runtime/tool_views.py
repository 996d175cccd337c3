"""A tool's MCP Apps metadata (`_meta.ui`): the view it renders with and who may call it.

Here in the runtime because the registry reads it as it registers tools; the rest of MCP
Apps (the view's resource, its policy, its session) is `portico.apps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

EXTENSION_ID = "io.modelcontextprotocol/ui"
VIEW_MIME = "text/html;profile=mcp-app"
SPEC_VERSION = "2026-01-26"  # the extension's revision Portico speaks to views

Audience = Literal["model", "app"]
AUDIENCES: frozenset[str] = frozenset({"model", "app"})


def advertised_settings() -> dict[str, Any]:
    """What Portico advertises under ``capabilities.extensions[EXTENSION_ID]``."""
    return {"mimeTypes": [VIEW_MIME]}


@dataclass(frozen=True)
class ToolView:
    """``_meta.ui`` of one tool. ``resource_uri``: the ``ui://`` view its results render
    in (None: no view, only a visibility); ``visibility``: who may call it."""

    resource_uri: str | None
    visibility: frozenset[str] = AUDIENCES

    @property
    def for_model(self) -> bool:
        return "model" in self.visibility

    @property
    def for_app(self) -> bool:
        return "app" in self.visibility


def tool_view(tool_name: str, meta: Mapping[str, Any] | None) -> tuple[ToolView | None, list[str]]:
    """Read ``_meta.ui`` (and the deprecated flat ``_meta["ui/resourceUri"]``).

    Returns the view (None when the tool has no MCP Apps metadata) and the problems found,
    each a sentence naming the tool and the key. A malformed part is dropped, never
    guessed: a bad ``resourceUri`` leaves the tool without a view; an unknown audience in
    ``visibility`` is ignored, so a tool meant for views only is never offered to the model
    because of a typo beside ``"app"``.
    """
    if not isinstance(meta, Mapping):
        return None, []
    problems: list[str] = []
    ui = meta.get("ui")
    flat = meta.get("ui/resourceUri")
    if ui is None and flat is None:
        return None, []
    if ui is not None and not isinstance(ui, Mapping):
        return None, [f"tool {tool_name!r}: _meta.ui is not an object; it is ignored"]
    ui = ui or {}
    uri: Any = ui.get("resourceUri", flat)
    resource_uri: str | None = None
    if uri is not None:
        if isinstance(uri, str) and uri.startswith("ui://") and len(uri) > len("ui://"):
            resource_uri = uri
        else:
            problems.append(
                f"tool {tool_name!r}: _meta.ui.resourceUri {uri!r} is not a ui:// URI; "
                "the tool's results are shown as text"
            )
    visibility = AUDIENCES
    raw = ui.get("visibility")
    if raw is not None:
        if not isinstance(raw, list | tuple) or not all(isinstance(v, str) for v in raw):
            problems.append(
                f"tool {tool_name!r}: _meta.ui.visibility {raw!r} is not a list of "
                '"model" / "app"; the tool is offered to views only'
            )
            visibility = frozenset({"app"})
        else:
            unknown = sorted(set(raw) - AUDIENCES)
            if unknown:
                problems.append(
                    f"tool {tool_name!r}: _meta.ui.visibility has unknown value(s) "
                    f"{', '.join(map(repr, unknown))}; they are ignored"
                )
            visibility = frozenset(raw) & AUDIENCES
    if resource_uri is None and visibility == AUDIENCES:
        return None, problems
    return ToolView(resource_uri, visibility), problems
