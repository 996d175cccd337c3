"""errors.describe: one clear message from any failure shape (groups included)."""

from __future__ import annotations

import asyncio

import httpx2
from mcp import MCPError

from portico.runtime.errors import (
    HttpErrorRecorder,
    NeedsAuth,
    ServerExited,
    describe,
    primary,
)


def test_exception_group_picks_the_telling_leaf() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1:9/mcp")
    group = BaseExceptionGroup(
        "unhandled errors in a TaskGroup",
        [
            asyncio.CancelledError(),
            ExceptionGroup(
                "inner", [httpx2.ConnectError("All connection attempts failed", request=request)]
            ),
        ],
    )
    assert isinstance(primary(group), httpx2.ConnectError)
    text = describe(group)
    assert "cannot connect to http://127.0.0.1:9/mcp" in text
    assert "All connection attempts failed" in text


def test_our_own_failures_win_over_noise() -> None:
    group = ExceptionGroup("g", [RuntimeError("noise"), NeedsAuth("sign in to x")])
    assert describe(group) == "sign in to x"


def test_server_exited_wording() -> None:
    assert str(ServerExited("s", 3, [])) == "server exited (code 3)"
    killed = str(ServerExited("s", -9, ["last words"]))
    assert killed.startswith("server was killed by signal 9 (SIGKILL); last stderr lines:")
    assert killed.endswith("last words")


async def test_enrichment_uses_only_errors_since_the_mark() -> None:
    recorder = HttpErrorRecorder()
    request = httpx2.Request("POST", "https://mcp.example.com/mcp?token=hidden")
    await recorder(httpx2.Response(401, request=request, content=b"please sign in"))
    error = MCPError(-32603, "Server returned an error response")
    text = describe(error, recorder=recorder)
    assert text.endswith("(HTTP 401 from POST https://mcp.example.com/mcp: please sign in)")
    assert "hidden" not in text  # the query string is not repeated
    mark = recorder.count
    assert describe(error, recorder=recorder, since=mark) == "Server returned an error response"


def test_sse_size_limit_names_the_sdk_cap() -> None:
    error = MCPError(-32000, "Server-sent event exceeded the 1048576 byte limit.")
    text = describe(error, transport="sse")
    assert "over 1 MiB" in text and "legacy SSE transport" in text
    assert "1048576" not in text and "byte limit" not in text  # said once, in our words
    assert "legacy SSE" not in describe(error, transport="http")
