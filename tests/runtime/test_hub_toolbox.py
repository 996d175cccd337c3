"""The hub and registry against the toolbox test server, over stdio and HTTP."""

from __future__ import annotations

import asyncio

import pytest

from portico.config.model import Config, Protocol, RuntimeSettings, ToolCost, ToolFilter
from portico.runtime.events import DiscoveryFinished, EventBus, LogLine, Status, ToolsChanged
from portico.runtime.hub import Hub
from portico.runtime.results import ImagePart
from tests.helpers.calls import calling
from tests.helpers.logs import AllowLogs

from .conftest import Recorder, RunningServer, eventually, make_spec, toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

HIDDEN = "".join(chr(0xE0000 + ord(c)) for c in "HIDDEN")
ENGLAND = "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "gbeng") + "\U000e007f"


def config(*specs, **settings) -> Config:  # type: ignore[no-untyped-def]
    return Config(servers=tuple(specs), settings=RuntimeSettings(**settings))


async def test_stdio_toolbox_end_to_end(
    bus: EventBus, events: Recorder, allow_logs: AllowLogs
) -> None:
    # list_changed notifications arrive only on legacy-protocol sessions (docs/platform-notes.md)
    allow_logs(r"tool_costs key 'tb__add' is written with the server prefix")
    spec = toolbox_spec(
        "tb",
        protocol=Protocol.LEGACY,
        tools=ToolFilter(exclude=("big", "hang")),
        tool_costs=(("echo", ToolCost(1, 1)), ("tb__add", ToolCost(2, 2))),
    )
    async with Hub(bus) as hub:
        line = await hub.apply(config(spec))
        assert hub.connection("tb").state.status is Status.RUNNING
        reg = hub.registry
        names = {t.qualified for t in reg.tools()}
        assert {"tb__echo", "tb__image", "tb__flip"} <= names
        assert "tb__big" not in names and "tb__hang" not in names
        # the toolbox offers prompts and resources: the utility tools are there
        assert {
            "tb__list_prompts",
            "tb__get_prompt",
            "tb__list_resources",
            "tb__read_resource",
        } <= names
        assert line == f"MCP: registered {len(reg)} tool(s) from 1 server(s)"
        assert [e.summary for e in events.events if isinstance(e, DiscoveryFinished)] == [line]
        assert {d.tool for d in reg.filtered_out("tb")} == {"big", "hang"}
        # the prefixed tool_costs key is reported on the server's log
        logged = [e.text for e in events.events if isinstance(e, LogLine) and e.server == "tb"]
        assert any("tool_costs key 'tb__add'" in text for text in logged)

        result = await reg.call("tb__echo", {"text": "hi"})
        assert result.text() == "echo: hi" and not result.is_error

        tags = await reg.call("tb__tags", {})
        assert HIDDEN not in tags.text() and ENGLAND in tags.text()

        meta = await reg.call("tb__meta", {})
        assert meta.meta is not None
        assert "modelcontextprotocol.io/x" not in meta.meta
        assert "tools.mcp.com/y" not in meta.meta
        assert "example.com/z" in meta.meta

        image = await reg.call("tb__image", {})
        [part] = image.images
        assert isinstance(part, ImagePart) and part.path.is_file()
        assert part.data.startswith(b"\x89PNG")
        assert f"MEDIA:{part.path}" in image.text()

        prompt = await reg.call("tb__get_prompt", {"name": "greet", "arguments": {"name": "Ada"}})
        assert "Ada" in prompt.text()
        readme = await reg.call("tb__read_resource", {"uri": "toolbox://readme"})
        assert "toolbox readme" in readme.text()

        # list_changed: the registry follows the server's tool list
        before = len(events.events)
        flipped = await reg.call("tb__flip", {})
        assert "extra on" in flipped.text()
        await eventually(
            lambda: "tb__extra" in {t.qualified for t in reg.tools()},
            what="tb__extra registered after list_changed",
        )
        assert any(isinstance(e, ToolsChanged) for e in events.events[before:])
        await reg.call("tb__flip", {})
        await eventually(
            lambda: "tb__extra" not in {t.qualified for t in reg.tools()},
            what="tb__extra removed after the second flip",
        )


async def test_calls_to_one_server_are_serialized_unless_parallel(bus: EventBus) -> None:
    async def run(parallel: bool) -> list[str]:
        order: list[str] = []

        def progress_for(tag: str):  # type: ignore[no-untyped-def]
            async def progress(done: float, total: float | None, message: str | None) -> None:
                order.append(tag)

            return progress

        spec = toolbox_spec("tb", supports_parallel_tool_calls=parallel)
        async with Hub(EventBus()) as hub:
            await hub.apply(config(spec))
            await asyncio.gather(
                hub.registry.call(
                    "tb__sleep", {"seconds": 0.6, "steps": 3}, context=calling(progress_for("a"))
                ),
                hub.registry.call(
                    "tb__sleep", {"seconds": 0.6, "steps": 3}, context=calling(progress_for("b"))
                ),
            )
        return order

    serial = await run(False)
    assert serial in (["a"] * 3 + ["b"] * 3, ["b"] * 3 + ["a"] * 3)
    parallel = await run(True)
    assert sorted(parallel) == ["a"] * 3 + ["b"] * 3
    assert parallel not in (["a"] * 3 + ["b"] * 3, ["b"] * 3 + ["a"] * 3)


async def test_http_toolbox(toolbox_http: RunningServer) -> None:
    spec = make_spec("web", "http", url=toolbox_http.url, tools=ToolFilter(include=("echo", "add")))
    async with Hub() as hub:
        line = await hub.apply(config(spec))
        assert hub.connection("web").state.status is Status.RUNNING
        names = [t.qualified for t in hub.registry.tools() if not t.utility]
        assert names == ["web__echo", "web__add"]
        result = await hub.registry.call("web__add", {"a": 2, "b": 3})
        assert result.text() == "5"
        assert line.startswith("MCP: registered ") and line.endswith("from 1 server(s)")


async def test_failed_server_is_in_the_summary(bus: EventBus) -> None:
    ok = toolbox_spec("ok")
    bad = toolbox_spec("bad", "--exit-at-start", "3")
    async with Hub(bus) as hub:
        line = await hub.apply(config(ok, bad))
        n = len(hub.registry)
        assert line == (
            f"MCP: registered {n} tool(s) from 1 server(s) (1 failed: bad (server exited (code 3)))"
        )
        assert hub.registry.server_tools("bad") == []
        # applying the same config again attempts nothing: bad is in its retry cooldown
        again = await hub.apply(config(ok, bad))
        assert again == (
            f"MCP: registered {n} tool(s) from 1 server(s) "
            "(1 not attempted (in retry cooldown): bad)"
        )
