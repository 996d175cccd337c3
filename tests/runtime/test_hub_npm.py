"""The hub against the npm reference servers (server-everything, server-filesystem)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.config.model import Config, Protocol, ToolFilter
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from portico.runtime.results import ImagePart, ResourceLinkPart, ResourcePart
from tests.helpers.calls import calling

from .conftest import EVERYTHING, NODE, make_spec

FILESYSTEM = EVERYTHING.parents[2] / "server-filesystem" / "dist" / "index.js"

pytestmark = [
    pytest.mark.npm,
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed"),
    pytest.mark.slow,
]


async def test_server_everything() -> None:
    spec = make_spec(
        "every",
        "stdio",
        command=str(NODE),
        args=(str(EVERYTHING), "stdio"),
        protocol=Protocol.LEGACY,
        tools=ToolFilter(exclude=("get-env",)),
    )
    async with Hub() as hub:
        line = await hub.apply(Config(servers=(spec,)))
        assert hub.connection("every").state.status is Status.RUNNING
        reg = hub.registry
        names = {t.qualified for t in reg.tools()}
        assert {
            "every__echo",
            "every__get-tiny-image",
            "every__get_prompt",
            "every__read_resource",
        } <= names
        assert "every__get-env" not in names
        assert line == f"MCP: registered {len(reg)} tool(s) from 1 server(s)"

        image = await reg.call("every__get-tiny-image", {})
        [part] = image.images
        assert isinstance(part, ImagePart) and part.path.is_file() and part.data
        assert f"MEDIA:{part.path}" in image.text()

        links = await reg.call("every__get-resource-links", {"count": 2})
        assert sum(isinstance(p, ResourceLinkPart) for p in links.parts) == 2

        ref = await reg.call(
            "every__get-resource-reference", {"resourceType": "Text", "resourceId": 1}
        )
        assert any(isinstance(p, ResourcePart) and p.uri for p in ref.parts)

        steps: list[float] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            steps.append(done)

        await reg.call(
            "every__trigger-long-running-operation",
            {"duration": 1, "steps": 3},
            context=calling(progress),
        )
        assert len(steps) >= 3

        prompt = await reg.call(
            "every__get_prompt", {"name": "args-prompt", "arguments": {"city": "Oslo"}}
        )
        assert "Oslo" in prompt.text()
        listing = await reg.call("every__list_resources", {})
        uri = listing.structured[0]["uri"]
        content = await reg.call("every__read_resource", {"uri": uri})
        assert content.parts and isinstance(content.parts[0], ResourcePart)


async def test_server_filesystem(tmp_path: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    (root / "note.txt").write_text("hello from the filesystem")
    spec = make_spec(
        "fs",
        "stdio",
        command=str(NODE),
        args=(str(FILESYSTEM), str(root)),
        tools=ToolFilter(include=("read_*", "list_directory")),
    )
    async with Hub() as hub:
        await hub.apply(Config(servers=(spec,)))
        tools = {t.tool for t in hub.registry.server_tools("fs") if not t.utility}
        assert "read_text_file" in tools and "list_directory" in tools
        assert "write_file" not in tools
        result = await hub.registry.call("fs__read_text_file", {"path": str(root / "note.txt")})
        assert result.text() == "hello from the filesystem"
        listing = await hub.registry.call("fs__list_directory", {"path": str(root)})
        assert "note.txt" in listing.text()
