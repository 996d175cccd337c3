"""The endpoint's fast path (gateway/fast_path.py): a plain 2026-07-28 tools/call or
tools/list answered without the SDK server's machinery, with the answer the SDK gives;
everything else still the SDK's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest

from portico.config.model import TrustLevel
from tests.gateway.helpers import Running, sdk_client, serving, texts
from tests.helpers.keyrings import MemoryKeyring
from tests.helpers.person import ScriptedPerson
from tests.helpers.specs import toolbox_spec

pytestmark = pytest.mark.slow  # real servers and a real endpoint

REVISION = "2026-07-28"


def modern(
    request_id: int, method: str, params: dict[str, Any], **meta: Any
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request as a client sends it: body (with the _meta envelope) and headers."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        **meta,
    }
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": envelope},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": REVISION,
        "Mcp-Method": method,
    }
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    return body, headers


Request = tuple[dict[str, Any], dict[str, str]]


async def post(
    http: httpx2.AsyncClient, running: Running, token: str, request: Request
) -> httpx2.Response:
    body, headers = request
    return await http.post(
        running.url, json=body, headers={**headers, "Authorization": f"Bearer {token}"}
    )


@asynccontextmanager
async def endpoint() -> AsyncIterator[tuple[Running, str, httpx2.AsyncClient]]:
    """The toolbox behind an endpoint, a client token and an HTTP client."""
    async with (
        serving(ScriptedPerson(), toolbox_spec("tb", trust=TrustLevel.FULL)) as running,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        yield running, running.endpoint.book.add_ephemeral("raw"), http


ECHO = {"name": "tb__echo", "arguments": {"text": "hi"}}


def served(running: Running) -> int:
    assert running.endpoint.fast is not None
    return running.endpoint.fast.served


async def test_a_plain_call_and_list_get_the_sdks_answer_from_the_fast_path(
    memory_keyring: MemoryKeyring,
) -> None:
    async with endpoint() as (running, token, http):
        fast = await post(http, running, token, modern(1, "tools/call", ECHO))
        assert served(running) == 1
        # a progress token sends the same call down the SDK's path
        sdk = await post(http, running, token, modern(2, "tools/call", ECHO, progressToken=7))
        fast_list = await post(http, running, token, modern(3, "tools/list", {}))
        listed = modern(4, "tools/list", {}, progressToken=8)
        sdk_list = await post(http, running, token, listed)
        assert served(running) == 2
    for mine, theirs in ((fast, sdk), (fast_list, sdk_list)):
        assert mine.status_code == theirs.status_code == 200
        assert mine.headers["content-type"] == theirs.headers["content-type"]
        assert mine.json()["result"] == theirs.json()["result"]
        assert "mcp-session-id" not in mine.headers
    assert fast.json()["id"] == 1 and fast_list.json()["id"] == 3
    result = fast.json()["result"]
    assert result["content"] == [{"type": "text", "text": "echo: hi"}]
    assert result["resultType"] == "complete" and "serverInfo" in str(result["_meta"])
    assert "tb__echo" in [t["name"] for t in fast_list.json()["result"]["tools"]]


async def test_what_the_fast_path_does_not_serve_gets_the_sdks_errors(
    memory_keyring: MemoryKeyring,
) -> None:
    async with endpoint() as (running, token, http):
        body, headers = modern(1, "tools/call", ECHO)
        del body["params"]["_meta"]  # no envelope
        no_envelope = await post(http, running, token, (body, headers))
        body, headers = modern(2, "tools/call", ECHO)
        headers["Mcp-Name"] = "tb__add"  # disagrees with the body
        mismatch = await post(http, running, token, (body, headers))
        body, headers = modern(3, "tools/call", {"arguments": {}})  # no name
        nameless = await post(http, running, token, (body, headers))
        unknown = await post(http, running, token, modern(4, "tools/call", {"name": "tb__nope"}))
        body, headers = modern(5, "tools/call", ECHO)
        headers["Content-Type"] = "text/plain"  # JSON, said not to be
        not_json = await post(http, running, token, (body, headers))
    assert not_json.status_code == 400 and "Content-Type" in not_json.text  # the SDK's
    assert no_envelope.status_code == 400 and no_envelope.json()["error"]["code"] == -32602
    assert mismatch.status_code == 400 and "mcp-name" in mismatch.json()["error"]["message"]
    assert nameless.status_code == 400 and nameless.json()["error"]["code"] == -32602
    assert served(running) == 1  # only the unknown tool, a tool error as the SDK's would be
    assert unknown.status_code == 200 and unknown.json()["result"]["isError"] is True


async def test_closing_the_response_stream_cancels_the_call_on_the_backend(
    memory_keyring: MemoryKeyring,
) -> None:
    async with endpoint() as (running, token, http):
        calls = running.hub.connection("tb").calls
        request = modern(1, "tools/call", {"name": "tb__hang", "arguments": {}})
        hanging = asyncio.create_task(post(http, running, token, request))
        await _until(lambda: calls.inflight == 1)
        hanging.cancel()  # closes the connection: the 2026-07-28 way to cancel
        await _until(lambda: calls.inflight == 0)
        assert served(running) == 1
        outcomes = [e.outcome for e in running.endpoint.gateway.activity.entries("raw")]
    assert "ok" not in outcomes


async def test_a_call_silent_past_the_ping_interval_becomes_a_pinged_sse_stream(
    memory_keyring: MemoryKeyring,
) -> None:
    async with endpoint() as (running, token, http):
        assert running.endpoint.fast is not None
        running.endpoint.fast.ping_seconds = 0.1
        request = modern(1, "tools/call", {"name": "tb__sleep", "arguments": {"seconds": 0.5}})
        raw = await post(http, running, token, request)
        async with sdk_client(running.url, token) as client:
            result = await client.call_tool("tb__sleep", {"seconds": 0.5})
        assert served(running) >= 2
    assert raw.status_code == 200 and raw.headers["content-type"] == "text/event-stream"
    assert raw.text.startswith(": ping\r\n\r\n") and "event: message\r\ndata: {" in raw.text
    assert '"slept 0.5"' in raw.text
    assert texts(result) == "slept 0.5" and not result.is_error


async def _until(condition: Any) -> None:
    deadline = time.monotonic() + 20.0
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        await asyncio.sleep(0.02)
