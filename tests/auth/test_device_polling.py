"""RFC 8628 polling against a small real HTTP authorization server: interval,
slow_down, expiry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp.shared.auth import OAuthClientInformationFull

from portico.auth.device import DeviceFlowError, device_login
from tests.helpers.oauth import FakeDeviceServer, ScriptedPrompter, free_port

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.fixture
async def serve() -> AsyncIterator[Any]:
    servers: list[uvicorn.Server] = []
    tasks: list[asyncio.Task[None]] = []

    async def start(fake: FakeDeviceServer) -> str:
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(fake.app(), host="127.0.0.1", port=port, log_level="warning")
        )
        servers.append(server)
        tasks.append(asyncio.create_task(server.serve()))
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.02)
        return f"http://127.0.0.1:{port}"

    yield start
    for server in servers:
        server.should_exit = True
    await asyncio.gather(*tasks)


async def _login(base: str, prompter: ScriptedPrompter, wait: float = 30) -> Any:
    async with httpx2.AsyncClient() as http:
        return await device_login(
            server="dev",
            http=http,
            device_endpoint=f"{base}/device",
            token_endpoint=f"{base}/token",
            client=OAuthClientInformationFull(client_id="cid", token_endpoint_auth_method="none"),
            scope="mcp",
            resource="http://127.0.0.1/mcp",
            prompter=prompter,
            wait_seconds=wait,
            slow_down_step=0.4,
        )


class _Waiting(ScriptedPrompter):
    async def device_code(self, request: Any) -> None:
        self.device_requests.append(request)
        await asyncio.Event().wait()


async def test_polls_honours_slow_down_and_returns_tokens(serve: Any) -> None:
    fake = FakeDeviceServer(["authorization_pending", "slow_down", "authorization_pending", ""])
    base = await serve(fake)
    prompter = _Waiting()
    tokens = await _login(base, prompter)
    assert tokens.access_token == "at"
    assert prompter.device_requests[0].user_code == "ABCD-EFGH"
    assert fake.forms[0]["resource"] == "http://127.0.0.1/mcp"
    gaps = [b - a for a, b in zip(fake.polls, fake.polls[1:], strict=False)]
    assert len(fake.polls) == 4
    assert gaps[0] < 0.4 <= gaps[1]  # after slow_down the interval grew by the step
    assert gaps[2] >= 0.4  # and stays grown


async def test_stops_at_expiry(serve: Any) -> None:
    fake = FakeDeviceServer([], expires_in=0.5)
    base = await serve(fake)
    with pytest.raises(DeviceFlowError, match="expired"):
        await _login(base, _Waiting())


async def test_denied(serve: Any) -> None:
    base = await serve(FakeDeviceServer(["access_denied"]))
    with pytest.raises(DeviceFlowError, match="denied"):
        await _login(base, _Waiting())


@pytest.mark.parametrize(
    ("device_body", "token_body", "endpoint", "words"),
    [
        ("<html>oops</html>", None, "/device", "not JSON"),
        ('{"user_code": "A", "verification_uri": "http://x"}', None, "/device", "device_code"),
        ('["not", "an", "object"]', None, "/device", "not an object"),
        (None, "<html>oops</html>", "/token", "not JSON"),
        (None, '{"token_type": "bearer"}', "/token", "access_token"),
    ],
)
async def test_malformed_answers_are_device_flow_errors(
    serve: Any, device_body: str | None, token_body: str | None, endpoint: str, words: str
) -> None:
    base = await serve(FakeDeviceServer([""], device_body=device_body, token_body=token_body))
    with pytest.raises(DeviceFlowError) as caught:
        await _login(base, _Waiting())
    message = str(caught.value)
    assert f"{base}{endpoint}" in message and words in message and "'dev'" in message
