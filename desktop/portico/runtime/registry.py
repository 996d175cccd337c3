"""The tool registry: every server's tools under model-facing names, filtered, with
utility tools, tool_search deferral, per-server call serialization and processed results.

The registry never asks anyone anything (policy wraps :meth:`Registry.call`). It is fed by
the hub (:meth:`Registry.set_server` after every connect or tool-list change) and reads
nothing from the network itself: calls go through the server's connection.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from portico.config.model import DEFAULT_DEFER_TOOLS, ServerSpec
from portico.paths import paths
from portico.runtime.tool_views import ToolView, tool_view

from . import results, toolsearch
from .call_context import CallContext
from .filtering import FilterDecision, apply_filter, cost_key_warnings, filter_warnings
from .naming import NameMap, toolset_name
from .results import TextPart, ToolResult
from .toolsearch import TOOL_SEARCH, ActiveSet, SearchDoc, ToolIndex

log = logging.getLogger(__name__)

UTILITY_TOOLS = ("list_resources", "read_resource", "list_prompts", "get_prompt")


class ToolCaller(Protocol):
    """What the registry needs from a connection (``runtime.connection.Connection``)."""

    @property
    def generation(self) -> int: ...

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, *, context: CallContext | None = None
    ) -> Any: ...
    async def list_prompts(self) -> Any: ...
    async def get_prompt(self, name: str, args: dict[str, str] | None) -> Any: ...
    async def list_resources(self) -> Any: ...
    async def read_resource(self, uri: str) -> Any: ...


class UnknownTool(KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown tool"


def contract_digest(
    name: str, description: str | None, schema: Mapping[str, Any] | None, annotations: Any
) -> str:
    """What a tool approval binds to (policy's ApprovalKey.contract): sha256 over the
    tool's name, description, input schema and annotations. Stored Always approvals hold
    it, so its form stays as it is."""
    blob = json.dumps(
        {
            "name": name,
            "description": description or "",
            "input_schema": schema or {},
            "annotations": annotations or {},
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class RegisteredTool:
    qualified: str
    server: str
    tool: str  # the exact name on the server (or the utility tool's name)
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    utility: bool = False
    # The description as the server sent it (TAG characters included): the contract
    # digest covers it, so a change hidden in invisible characters still shows.
    raw_description: str | None = field(default=None, repr=False, compare=False)
    # MCP Apps: the view its results render in, and who may call it (None: anyone)
    view: ToolView | None = None

    @property
    def for_model(self) -> bool:
        """Offered to a model (a tool for views only is not)."""
        return self.view is None or self.view.for_model

    @property
    def for_views(self) -> bool:
        """Callable by its own server's views."""
        return self.view is None or self.view.for_app

    @cached_property
    def digest(self) -> str:
        """sha256 over name, description, input schema and annotations (computed once)."""
        desc = self.description if self.raw_description is None else self.raw_description
        return contract_digest(self.tool, desc, self.input_schema, self.annotations)

    @property
    def toolset(self) -> str:
        return toolset_name(self.server)

    @property
    def read_only(self) -> bool:
        return bool((self.annotations or {}).get("readOnlyHint"))


@dataclass(frozen=True)
class ModelTool:
    """One tool as offered to a model."""

    name: str
    description: str
    input_schema: dict[str, Any]
    deferred: bool = False  # behind the provider's own tool search (``native_search``)


@dataclass
class ServerTools:
    spec: ServerSpec
    tools: list[RegisteredTool] = field(default_factory=list)
    filtered_out: list[FilterDecision] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    caller: ToolCaller | None = None


def _annotations(tool: Any) -> dict[str, Any] | None:
    ann = getattr(tool, "annotations", None)
    if ann is None:
        return None
    if hasattr(ann, "model_dump"):
        dumped = ann.model_dump(by_alias=True, exclude_none=True)
        return dumped or None
    return dict(ann)


def _has_capability(capabilities: Any, key: str) -> bool:
    if capabilities is None:
        return False
    if isinstance(capabilities, Mapping):
        return capabilities.get(key) is not None
    return getattr(capabilities, key, None) is not None


_UTILITY_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "list_resources": (
        "List the resources the {server} server offers (URIs, names, MIME types).",
        {"type": "object", "properties": {}},
    ),
    "read_resource": (
        "Read one resource of the {server} server by its URI.",
        {"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]},
    ),
    "list_prompts": (
        "List the prompts the {server} server offers, with their arguments.",
        {"type": "object", "properties": {}},
    ),
    "get_prompt": (
        "Get one prompt of the {server} server, filled with its arguments.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["name"],
        },
    ),
}


class Registry:
    def __init__(
        self, *, defer_tools: int = DEFAULT_DEFER_TOOLS, image_dir: Path | None = None
    ) -> None:
        self.defer_tools = defer_tools
        self._image_dir = image_dir
        self._servers: dict[str, ServerTools] = {}
        self._names = NameMap()
        self._by_name: dict[str, RegisteredTool] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._index: ToolIndex | None = None
        self._gone: dict[str, tuple[str, str]] = {}  # qualified -> (server, why it is down)

    # --- building ---------------------------------------------------------------

    def image_dir(self) -> Path:
        """Where result images go (asked only when an image arrives)."""
        return self._image_dir or paths().image_cache_dir

    def set_server(
        self,
        spec: ServerSpec,
        tools: Sequence[Any],
        *,
        capabilities: Any = None,
        caller: ToolCaller | None = None,
    ) -> list[str]:
        """(Re)register a server's tools. Returns the warnings (filters, tool_costs)."""
        self._gone = {q: v for q, v in self._gone.items() if v[0] != spec.name}
        self._drop(spec.name)
        entry = ServerTools(spec=spec, caller=caller)
        offered = [t.name for t in tools]
        decisions = {d.tool: d for d in apply_filter(offered, spec.tools)}
        entry.warnings = filter_warnings(spec.name, offered, spec.tools)
        entry.warnings += cost_key_warnings(spec.name, spec.tool_costs_dict.keys(), offered)
        for tool in tools:
            decision = decisions[tool.name]
            if not decision.included:
                entry.filtered_out.append(decision)
                continue
            registered, problems = self._register_tool(spec.name, tool)
            entry.tools.append(registered)
            entry.warnings += [f"server {spec.name!r}: {p}" for p in problems]
        for util in self._utility_names(spec, capabilities):
            if util in decisions:
                entry.warnings.append(
                    f"server {spec.name!r} has its own tool {util!r}; the utility tool of "
                    "that name is not added"
                )
                continue
            entry.tools.append(self._register_utility(spec.name, util))
        self._servers[spec.name] = entry
        self._index = None
        return entry.warnings

    def _utility_names(self, spec: ServerSpec, capabilities: Any) -> list[str]:
        out: list[str] = []
        if spec.tools.resources and _has_capability(capabilities, "resources"):
            out += ["list_resources", "read_resource"]
        if spec.tools.prompts and _has_capability(capabilities, "prompts"):
            out += ["list_prompts", "get_prompt"]
        return out

    def _register_tool(self, server: str, tool: Any) -> tuple[RegisteredTool, list[str]]:
        qualified = self._names.add(server, tool.name)
        view, problems = tool_view(tool.name, getattr(tool, "meta", None))
        description = results.strip_tags(tool.description or "")
        schema = dict(getattr(tool, "input_schema", None) or {"type": "object"})
        annotations = _annotations(tool)
        title = getattr(tool, "title", None)
        reg = RegisteredTool(
            qualified=qualified,
            server=server,
            tool=tool.name,
            description=description,
            input_schema=schema,
            annotations=annotations,
            title=results.strip_tags(title) if title else None,
            output_schema=getattr(tool, "output_schema", None),
            raw_description=tool.description or "",
            view=view,
        )
        self._by_name[qualified] = reg
        return reg, problems

    def _register_utility(self, server: str, util: str) -> RegisteredTool:
        qualified = self._names.add(server, util)
        text, schema = _UTILITY_SPECS[util]
        description = text.format(server=server)
        annotations = {"readOnlyHint": True}
        reg = RegisteredTool(
            qualified=qualified,
            server=server,
            tool=util,
            description=description,
            input_schema=schema,
            annotations=annotations,
            utility=True,
        )
        self._by_name[qualified] = reg
        return reg

    def remove_server(self, name: str, *, down: str | None = None) -> None:
        """Drop the tools of ``name``; ``down`` says why it is not running (a call of one
        of its tools then says so instead of "no tool named ...")."""
        entry = self._servers.get(name)
        self._gone = {q: v for q, v in self._gone.items() if v[0] != name}
        if down is not None and entry is not None:
            for tool in entry.tools:
                self._gone[tool.qualified] = (name, down)
        self._drop(name)
        self._index = None

    def _drop(self, name: str) -> None:
        entry = self._servers.pop(name, None)
        if entry is None:
            return
        for tool in entry.tools:
            self._by_name.pop(tool.qualified, None)
        self._names.remove_server(name)

    # --- reading ----------------------------------------------------------------

    def tools(self) -> list[RegisteredTool]:
        return list(self._by_name.values())

    def servers(self) -> list[str]:
        return list(self._servers)

    def spec(self, server: str) -> ServerSpec | None:
        """The config the server's tools were registered under."""
        entry = self._servers.get(server)
        return entry.spec if entry else None

    def generation(self, server: str) -> int | None:
        """The server connection's generation (changes when a session ends), if known."""
        entry = self._servers.get(server)
        return entry.caller.generation if entry is not None and entry.caller else None

    def server_tools(self, server: str) -> list[RegisteredTool]:
        entry = self._servers.get(server)
        return list(entry.tools) if entry else []

    def filtered_out(self, server: str) -> list[FilterDecision]:
        entry = self._servers.get(server)
        return list(entry.filtered_out) if entry else []

    def warnings(self, server: str) -> list[str]:
        entry = self._servers.get(server)
        return list(entry.warnings) if entry else []

    def toolsets(self) -> dict[str, list[str]]:
        """``mcp-<server>`` -> qualified names, only for servers with at least one tool."""
        return {
            toolset_name(name): [t.qualified for t in entry.tools]
            for name, entry in self._servers.items()
            if entry.tools
        }

    def resolve(self, qualified: str) -> RegisteredTool:
        tool = self._by_name.get(qualified)
        if tool is None and qualified in self._gone:
            server, why = self._gone[qualified]
            raise UnknownTool(f"server {server!r} is not running ({why})")
        if tool is None:
            raise UnknownTool(
                f"no tool named {qualified!r}; its server may be stopped or the tool "
                "filtered out (run `portico mcp tools SERVER` to see what is offered)"
            )
        return tool

    def __len__(self) -> int:
        return len(self._by_name)

    # --- deferral and search ----------------------------------------------------

    def index(self) -> ToolIndex:
        if self._index is None:
            self._index = ToolIndex(
                SearchDoc(
                    t.qualified,
                    t.description,
                    tuple((t.input_schema.get("properties") or {}).keys()),
                )
                for t in self._deferrable()
            )
        return self._index

    def _deferrable(self) -> Iterable[RegisteredTool]:
        for entry in self._servers.values():
            if not entry.spec.always_load:
                yield from (t for t in entry.tools if t.for_model)

    def deferring(self) -> bool:
        offered = sum(1 for t in self._by_name.values() if t.for_model)
        return toolsearch.should_defer(offered, self.defer_tools)

    def model_tools(
        self, active: ActiveSet | Iterable[str] = (), *, native_search: bool = False
    ) -> list[ModelTool]:
        """The tools to offer a model now: everything, or the loaded ones + tool_search.
        ``native_search``: the provider searches deferred tools itself, so every tool is
        offered and the deferred ones are marked ``deferred`` (no tool_search of ours).
        A tool for views only (MCP Apps ``visibility: ["app"]``) is never among them."""
        loaded = active if isinstance(active, ActiveSet) else ActiveSet(active)
        if not self.deferring():
            return [_model(t) for t in self._by_name.values() if t.for_model]
        if native_search:
            return [
                replace(_model(t), deferred=not (e.spec.always_load or t.qualified in loaded))
                for e in self._servers.values()
                for t in e.tools
                if t.for_model
            ]
        offered: list[ModelTool] = []
        deferred: list[str] = []
        for entry in self._servers.values():
            for t in entry.tools:
                if not t.for_model:
                    continue
                if entry.spec.always_load or t.qualified in loaded:
                    offered.append(_model(t))
                else:
                    deferred.append(t.qualified)
        if deferred:
            offered.append(
                ModelTool(
                    TOOL_SEARCH,
                    toolsearch.tool_search_description(deferred),
                    toolsearch.tool_search_schema(),
                )
            )
        return offered

    def search(
        self, query: str, active: ActiveSet | None = None, limit: int = toolsearch.DEFAULT_LIMIT
    ) -> list[RegisteredTool]:
        """Rank deferred tools for ``query``; matches are added to ``active``."""
        hits = [self._by_name[n] for n, _ in self.index().search(query, limit)]
        if active is not None:
            active.add(t.qualified for t in hits)
        return hits

    def tool_search_result(self, query: str, active: ActiveSet, limit: int) -> ToolResult:
        hits = self.search(query, active, limit)
        if not hits:
            text = f"No tools match {query!r}. Try other words."
        else:
            lines = [f"Loaded {len(hits)} tool(s); you can call them now:"]
            for t in hits:
                first = t.description.strip().splitlines()[0] if t.description.strip() else ""
                lines.append(f"- {t.qualified}: {first}" if first else f"- {t.qualified}")
            text = "\n".join(lines)
        return ToolResult(parts=(TextPart(text),))

    # --- calling ----------------------------------------------------------------

    def _lock(self, server: str) -> asyncio.Lock:
        lock = self._locks.get(server)
        if lock is None:
            lock = self._locks[server] = asyncio.Lock()
        return lock

    async def call(
        self,
        qualified: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        context: CallContext | None = None,
        active: ActiveSet | None = None,
    ) -> ToolResult:
        """Call a tool by its qualified name and return the processed result.
        ``context``: the caller's (who calls, progress, the task it may become)."""
        args = dict(arguments or {})
        if qualified == TOOL_SEARCH:
            limit = int(args.get("limit") or toolsearch.DEFAULT_LIMIT)
            return self.tool_search_result(
                str(args.get("query", "")), active if active is not None else ActiveSet(), limit
            )
        tool = self.resolve(qualified)
        entry = self._servers[tool.server]
        caller = entry.caller
        if caller is None:
            raise RuntimeError(f"server {tool.server!r} has no connection to call through")
        if entry.spec.supports_parallel_tool_calls:
            return await self._invoke(caller, tool, args, context)
        async with self._lock(tool.server):
            return await self._invoke(caller, tool, args, context)

    async def _invoke(
        self,
        caller: ToolCaller,
        tool: RegisteredTool,
        args: dict[str, Any],
        context: CallContext | None,
    ) -> ToolResult:
        if not tool.utility:
            raw = await caller.call_tool(tool.tool, args, context=context)
            return await results.aprocess_result(raw, self.image_dir)
        if tool.tool == "read_resource":
            return results.process_resource(await caller.read_resource(str(args["uri"])))
        if tool.tool == "get_prompt":
            prompt_args = {k: str(v) for k, v in (args.get("arguments") or {}).items()}
            raw = await caller.get_prompt(str(args["name"]), prompt_args or None)
            return await results.aprocess_prompt(raw, self.image_dir)
        if tool.tool == "list_resources":
            return _listing(await caller.list_resources(), "resources")
        return _listing(await caller.list_prompts(), "prompts")


def _model(t: RegisteredTool) -> ModelTool:
    return ModelTool(t.qualified, t.description, t.input_schema)


def _listing(result: Any, kind: str) -> ToolResult:
    items = result if isinstance(result, list) else getattr(result, kind, [])
    data = [
        results.strip_tags_deep(i.model_dump(mode="json", by_alias=True, exclude_none=True))
        for i in items
    ]
    return ToolResult(
        parts=(TextPart(json.dumps(data, indent=1, ensure_ascii=False)),), structured=data
    )
