"""server-everything (npm reference server, node) over stdio through a Connection."""

from __future__ import annotations

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.calls import calling

from .conftest import EVERYTHING, NODE, make_spec

pytestmark = [
    pytest.mark.npm,
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed (scripts/test.sh)"),
    pytest.mark.slow,
]


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_everything_over_stdio(bus: EventBus, protocol: Protocol) -> None:
    node = str(NODE) if NODE.exists() else "node"
    spec = make_spec(
        "everything", command=node, args=(str(EVERYTHING), "stdio"), protocol=protocol, timeout=20
    )
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        names = {t.name for t in conn.tools}
        assert {"echo", "get-sum", "trigger-long-running-operation", "get-tiny-image"} <= names
        assert conn.prompts and conn.resources
        result = await conn.call_tool("echo", {"message": "hello everything"})
        assert "hello everything" in result.content[0].text
        total = await conn.call_tool("get-sum", {"a": 2, "b": 40})
        assert "42" in total.content[0].text
        seen: list[float] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append(done)

        await conn.call_tool(
            "trigger-long-running-operation", {"duration": 1, "steps": 3}, context=calling(progress)
        )
        assert len(seen) == 3
        image = await conn.call_tool("get-tiny-image", {})
        assert any(part.type == "image" for part in image.content)
        prompt = await conn.get_prompt(conn.prompts[0].name, {})
        assert prompt.messages
    finally:
        await conn.stop()
    assert conn.state.status is Status.STOPPED
