"""ask(): every non-answer is a decline; the network policy's redirect and OAuth checks."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx2
import pytest

from portico.config.model import Scope, Transport
from portico.policy.ask import ask, ask_outcome
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.redirects import (
    NetworkPolicyError,
    check_oauth_endpoint,
    check_redirect,
    refuse_cross_origin_redirects,
)
from portico.prompts import Refused, TrustChoice, TrustRequest

from .conftest import spec_for


async def test_answer_timeout_refusal_and_abort() -> None:
    async def answer() -> str:
        return "yes"

    async def slow() -> str:
        await asyncio.sleep(30)
        return "late"

    async def refuse() -> str:
        raise Refused("nobody here: run X")

    async def torn_down() -> str:
        raise asyncio.CancelledError

    assert await ask(answer(), 1, declined="no") == "yes"
    timed = await ask_outcome(slow(), 0.05)
    assert (timed.answer, timed.ended_by, timed.message) == (
        None,
        "timeout",
        "no answer within 0.05 seconds",
    )
    refused = await ask_outcome(refuse())
    assert refused.ended_by == "refused" and refused.message == "nobody here: run X"
    aborted = await ask_outcome(torn_down())
    assert aborted.ended_by == "aborted" and not aborted.answered
    assert await ask(slow(), 0.05, declined="no") == "no"


async def test_cancelling_the_asker_still_cancels() -> None:
    started = asyncio.Event()

    async def wait_forever() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.create_task(ask(wait_forever(), None, declined="no"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_non_interactive_trust_message_names_file_and_command() -> None:
    request = TrustRequest(
        server="docs",
        source="/p/.portico/mcp.toml:7",
        project="/p",
        transport="stdio",
        target="npx docs",
    )
    outcome = await ask_outcome(NonInteractivePrompter().review_trust(request))
    assert outcome.answer is None or outcome.answer is TrustChoice.DECLINE
    assert outcome.message == (
        "server 'docs' in /p/.portico/mcp.toml is waiting for trust review: run "
        "'portico mcp trust docs' or open it in the app"
    )


def test_cross_origin_redirects_are_refused() -> None:
    assert check_redirect("https://a.example/mcp", "/mcp/") is None
    assert check_redirect("https://a.example/mcp", "https://a.example:443/other") is None
    problem = check_redirect("https://a.example/mcp", "https://b.example/mcp")
    assert problem is not None and "https://b.example:443" in problem
    assert check_redirect("https://a.example/mcp", "http://a.example/mcp") is not None
    assert check_redirect("https://a.example/mcp", "https://a.example:8443/mcp") is not None


@pytest.fixture
async def redirector() -> AsyncIterator[int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://evil.example/steal\r\n"
            b"Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, family=socket.AF_INET)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def test_response_hook_refuses_a_real_cross_origin_redirect(redirector: int) -> None:
    async with httpx2.AsyncClient(
        event_hooks={"response": [refuse_cross_origin_redirects]}, follow_redirects=True
    ) as client:
        with pytest.raises(NetworkPolicyError, match="another origin"):
            await client.get(f"http://127.0.0.1:{redirector}/mcp")


async def test_oauth_endpoints_pinned_and_private_only_on_the_mcp_origin(project) -> None:  # type: ignore[no-untyped-def]
    table = {
        "mcp.corp": ["10.0.0.5"],
        "auth.corp": ["10.0.0.6"],
        "auth.example": ["93.184.216.34"],
    }

    async def dns(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError("no such host")
        return table[host]

    spec = spec_for(
        "corp",
        scope=Scope.PROJECT,
        project=project,
        transport=Transport.HTTP,
        url="https://mcp.corp/mcp",
    )
    # the reviewed MCP origin: its pins are reused, a private address is fine
    pins = await check_oauth_endpoint(
        spec,
        "https://mcp.corp/.well-known/oauth-authorization-server",
        resolver=dns,
        mcp_pins={"mcp.corp": ["10.0.0.5"]},
    )
    assert pins == {"mcp.corp": ["10.0.0.5"]}
    # a public endpoint elsewhere: resolved and pinned
    assert await check_oauth_endpoint(spec, "https://auth.example/token", resolver=dns) == {
        "auth.example": ["93.184.216.34"]
    }
    # a private endpoint on another origin: refused
    with pytest.raises(NetworkPolicyError, match=r"10\.0\.0\.6, a private address"):
        await check_oauth_endpoint(spec, "https://auth.corp/token", resolver=dns)
    with pytest.raises(NetworkPolicyError, match="plaintext"):
        await check_oauth_endpoint(spec, "http://auth.example/token", resolver=dns)
    with pytest.raises(NetworkPolicyError, match="DNS lookup"):
        await check_oauth_endpoint(spec, "https://gone.example/token", resolver=dns)
