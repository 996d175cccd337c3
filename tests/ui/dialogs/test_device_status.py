"""The device-code dialog shows the core's real poll states: the RFC 8628 poller
(portico.auth.device) runs on the runtime thread against a small real device server and
reports each outcome; the QtPrompter's dialog on the GUI thread shows it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp.shared.auth import OAuthClientInformationFull

from portico.auth.device import DeviceFlowError, device_login
from portico.ui.dialogs.device_dialog import DeviceDialog
from portico.ui.facade import RuntimeThread
from portico.ui.prompter import QtPrompter
from tests.helpers.oauth import (
    FakeDeviceServer,
    Oidc,
    ScriptedBrowser,
    free_port,
    no_real_browser,  # noqa: F401 (fixtures for the real device flow)
    oidc,  # noqa: F401
    protected,  # noqa: F401
    server_spec,
)
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def _start(fake: FakeDeviceServer) -> tuple[str, uvicorn.Server, asyncio.Task[None]]:
    """On the runtime loop: serve the fake device endpoints on loopback."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(fake.app(), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.02)
    return f"http://127.0.0.1:{port}", server, task


@pytest.fixture
async def device_server(runtime: RuntimeThread) -> AsyncIterator[Any]:
    started: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []

    async def start(fake: FakeDeviceServer) -> str:
        base, server, task = await runtime.submit(_start(fake))
        started.append((server, task))
        return base

    yield start

    async def stop() -> None:
        for server, task in started:
            server.should_exit = True
            await task

    await runtime.submit(stop())


async def _login(base: str, prompter: QtPrompter) -> Any:
    async with httpx2.AsyncClient() as http:
        return await device_login(
            server="box",
            http=http,
            device_endpoint=f"{base}/device",
            token_endpoint=f"{base}/token",
            client=OAuthClientInformationFull(client_id="cid", token_endpoint_auth_method="none"),
            scope=None,
            resource=None,
            prompter=prompter,
            wait_seconds=30,
            slow_down_step=0.4,
        )


async def _dialog(prompter: QtPrompter, seen: list[str]) -> DeviceDialog:
    dialog = await until(lambda: prompter.current, 10, "the device dialog")
    assert isinstance(dialog, DeviceDialog)
    seen.append(dialog.state_label.text())
    dialog.statusShown.connect(seen.append)
    return dialog


async def test_dialog_follows_the_real_poll_states(
    runtime: RuntimeThread, device_server: Any
) -> None:
    prompter = QtPrompter()
    fake = FakeDeviceServer(["authorization_pending", "slow_down"])
    base = await device_server(fake)
    login = runtime.submit(_login(base, prompter))
    seen: list[str] = []
    dialog = await _dialog(prompter, seen)
    assert dialog.code_label.text() == "ABCD-EFGH"
    assert seen[0].startswith("Waiting for you to approve")

    slowed = "Slowing down: the server asked to poll every 0.45 s."
    await until(lambda: dialog.state_label.text() == slowed, 10, "the slow-down state")
    await until(
        lambda: "checked 3 times, every 0.45 s" in dialog.state_label.text(), 10, "3rd poll"
    )
    assert "checked once, every 0.05 s" in "\n".join(seen)
    assert "valid for" in dialog.expiry_label.text()

    fake.answers.append("")  # the person approved on the other device: tokens next poll
    tokens = await asyncio.wait_for(login, 10)
    assert tokens.access_token == "at"
    assert seen[-1] == "Approved. Finishing the sign-in…"
    await until(lambda: gone(dialog), 10, "the dialog to close after success")
    print("\npoll states shown:", " | ".join(dict.fromkeys(seen)))


async def test_dialog_shows_denied_then_closes(runtime: RuntimeThread, device_server: Any) -> None:
    prompter = QtPrompter()
    fake = FakeDeviceServer([])
    base = await device_server(fake)
    login = runtime.submit(_login(base, prompter))
    seen: list[str] = []
    dialog = await _dialog(prompter, seen)
    await until(lambda: "checked" in dialog.state_label.text(), 10, "a pending poll")
    fake.answers.append("access_denied")
    with pytest.raises(DeviceFlowError, match="denied"):
        await asyncio.wait_for(login, 10)
    await until(lambda: gone(dialog), 10, "the dialog to close")
    assert "The sign-in was denied on the other device." in seen


# --- the real device flow: oidc-provider, the AuthManager, the app's prompter --------------------


async def test_real_device_login_through_the_dialog(  # fixtures from tests.helpers
    runtime: RuntimeThread,
    oidc: Oidc,  # noqa: F811
    protected: Any,  # noqa: F811
    memory_keyring: Any,
    no_real_browser: None,  # noqa: F811
) -> None:
    from portico.auth.manager import AuthManager

    prompter = QtPrompter()
    spec = server_spec("device", oidc.resource)
    managers: list[AuthManager] = []

    async def login() -> None:
        manager = AuthManager(prompter, endpoint_policy=None)
        managers.append(manager)
        await manager.login(spec, flow="device")

    done = runtime.submit(login())
    seen: list[str] = []
    dialog = await _dialog(prompter, seen)
    request = dialog.request
    assert dialog.code_label.text() == request.user_code
    assert request.verification_uri.startswith(oidc.issuer)
    assert seen[0] == f"Waiting for you to approve (checking every {request.interval:g} s)…"

    # The person approves on "another device": oidc-provider's real forms.
    browser = ScriptedBrowser()
    browser.user_code = dialog.code_label.text()
    await browser.run(
        request.verification_uri_complete or request.verification_uri, None, follow_final=False
    )
    await asyncio.wait_for(done, 30)
    assert seen[-1] == "Approved. Finishing the sign-in…"
    await until(lambda: gone(dialog), 10, "the dialog to close")
    tokens = await runtime.submit(managers[0].storage_for(spec).raw_tokens())
    assert tokens is not None and tokens.access_token
