from __future__ import annotations

import time

import mcp.types as t

from portico.config.model import ToolCost, ToolFilter
from portico.runtime.registry import Registry, contract_digest
from portico.runtime.toolsearch import TOOL_SEARCH, ActiveSet
from tests.helpers.tools import TOOLS, stdio_spec, tool


def test_registers_qualified_names_and_maps_back() -> None:
    reg = Registry()
    reg.set_server(stdio_spec("fs"), TOOLS)
    names = [x.qualified for x in reg.tools()]
    assert names[:2] == ["fs__read_file", "fs__write_file"]
    assert names[2].startswith("fs__list_dir_")
    assert reg.resolve(names[2]).tool == "list.dir"
    assert reg.resolve("fs__read_file").description == "Read a file"  # TAG stripped
    assert reg.toolsets() == {"mcp-fs": names}


def test_contract_digest_covers_schema_and_annotations() -> None:
    a = contract_digest("x", "d", {"type": "object"}, None)
    assert a == contract_digest("x", "d", {"type": "object"}, None)
    assert a != contract_digest("x", "d", {"type": "object", "properties": {}}, None)
    assert a != contract_digest("x", "d", {"type": "object"}, {"readOnlyHint": True})
    assert a != contract_digest("x", "d2", {"type": "object"}, None)
    reg = Registry()
    reg.set_server(stdio_spec("fs"), TOOLS)
    assert reg.resolve("fs__read_file").digest == contract_digest(
        "read_file", TOOLS[0].description, TOOLS[0].input_schema, None
    )


def test_filtering_and_warnings() -> None:
    reg = Registry()
    s = stdio_spec(
        "fs",
        tools=ToolFilter(exclude=("write_*",)),
        tool_costs=(
            ("read_file", ToolCost(1, 1)),
            ("fs__list.dir", ToolCost(1, 1)),
            ("nope", ToolCost(1, 1)),
        ),
    )
    warnings = reg.set_server(s, TOOLS)
    assert [x.tool for x in reg.server_tools("fs")] == ["read_file", "list.dir"]
    assert [(d.tool, d.reason) for d in reg.filtered_out("fs")] == [
        ("write_file", "excluded by tools.exclude pattern 'write_*'")
    ]
    assert len(warnings) == 2
    assert "server prefix" in warnings[0] and "'nope'" in warnings[1]


def test_empty_servers_have_no_toolset() -> None:
    reg = Registry()
    reg.set_server(stdio_spec("empty"), [])
    reg.set_server(stdio_spec("fs", tools=ToolFilter(include=("none",))), TOOLS)
    assert reg.toolsets() == {}


def test_utility_tools_need_config_and_capability() -> None:
    caps = t.ServerCapabilities(prompts=t.PromptsCapability(), resources=t.ResourcesCapability())
    reg = Registry()
    reg.set_server(stdio_spec("a"), [], capabilities=caps)
    assert [x.tool for x in reg.server_tools("a")] == [
        "list_resources",
        "read_resource",
        "list_prompts",
        "get_prompt",
    ]
    reg.set_server(stdio_spec("b", tools=ToolFilter(prompts=False)), [], capabilities=caps)
    assert [x.tool for x in reg.server_tools("b")] == ["list_resources", "read_resource"]
    only_tools = t.ServerCapabilities(tools=t.ToolsCapability())
    reg.set_server(stdio_spec("c"), TOOLS, capabilities=only_tools)
    assert all(not x.utility for x in reg.server_tools("c"))
    assert reg.resolve("a__read_resource").read_only


def test_deferral_tool_search_and_always_load() -> None:
    reg = Registry(defer_tools=3)
    reg.set_server(stdio_spec("fs"), TOOLS)
    assert [m.name for m in reg.model_tools()] == [x.qualified for x in reg.tools()]
    reg.set_server(
        stdio_spec("gh", always_load=True),
        [tool("create_issue", "Create an issue", title="string")],
    )
    offered = reg.model_tools(ActiveSet())
    names = [m.name for m in offered]
    assert names == ["gh__create_issue", TOOL_SEARCH]
    assert "fs__read_file" in offered[-1].description
    assert "gh__create_issue" not in offered[-1].description

    active = ActiveSet()
    hits = reg.search("write a file content", active, limit=1)
    assert [h.qualified for h in hits] == ["fs__write_file"]
    names = [m.name for m in reg.model_tools(active)]
    assert names == ["fs__write_file", "gh__create_issue", TOOL_SEARCH]
    # a resumed conversation gets the same set back
    resumed = ActiveSet.from_json(active.to_json())
    assert [m.name for m in reg.model_tools(resumed)] == names


def test_defer_zero_always_defers() -> None:
    reg = Registry(defer_tools=0)
    reg.set_server(stdio_spec("fs"), TOOLS[:1])
    assert [m.name for m in reg.model_tools()] == [TOOL_SEARCH]


async def test_tool_search_call_loads_into_active_set() -> None:
    reg = Registry(defer_tools=0)
    reg.set_server(stdio_spec("fs"), TOOLS)
    active = ActiveSet()
    result = await reg.call(TOOL_SEARCH, {"query": "directory", "limit": 1}, active=active)
    assert list(active) == [x.qualified for x in reg.tools() if x.tool == "list.dir"]
    assert "Loaded 1 tool(s)" in result.text()


def test_large_registry_builds_and_searches() -> None:
    tools = [
        tool(f"op_{i}_{w}", f"Do {w} things with resource {i}", id="string", zone="string")
        for i, w in enumerate(["dns", "workers", "kv", "r2", "zones", "firewall"] * 550)
    ]
    started = time.perf_counter()
    reg = Registry(defer_tools=10)
    reg.set_server(stdio_spec("cloud"), tools)
    reg.index()
    elapsed = time.perf_counter() - started
    assert len(reg) == 3300
    hits = reg.search("firewall resource 17", limit=3)
    assert hits[0].tool == "op_17_firewall"
    assert elapsed < 10  # generous: the benchmark measures the real figure


def test_a_tool_of_a_server_that_is_down_says_when_it_is_retried() -> None:
    from portico.runtime.events import ServerState, Status
    from portico.runtime.hub import _why_down
    from portico.runtime.registry import UnknownTool

    reg = Registry()
    reg.set_server(stdio_spec("fs"), TOOLS)
    retry_at = time.time() + 30
    state = ServerState("fs", Status.COOLDOWN, error="server exited (code 3)", retry_at=retry_at)
    reg.remove_server("fs", down=_why_down(state))
    when = time.strftime("%H:%M:%S", time.localtime(retry_at))
    try:
        reg.resolve("fs__read_file")
    except UnknownTool as exc:
        assert str(exc) == f"server 'fs' is not running (retry at {when})"
    else:
        raise AssertionError("resolved a tool of a server that is down")
    # back up: its tools resolve again; removed from the config: no tool of that name
    reg.set_server(stdio_spec("fs"), TOOLS)
    assert reg.resolve("fs__read_file").tool == "read_file"
    reg.remove_server("fs")
    try:
        reg.resolve("fs__read_file")
    except UnknownTool as exc:
        assert str(exc).startswith("no tool named 'fs__read_file'")
