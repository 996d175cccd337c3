"""No token, code, verifier or secret ever appears in a log line or an error message."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlparse

import httpx2
import pytest
from mcp.client.auth import oauth2 as sdk_oauth2

from portico.auth.manager import AuthManager
from portico.auth.secret_store import SecretStore
from tests.helpers.logs import AllowLogs
from tests.helpers.oauth import (
    Clock,
    Oidc,
    ScriptedPrompter,
    call_echo,
    make_oidc,
    serve_protected,
    server_spec,
)
from tests.servers.protected import ProtectedState

pytestmark = pytest.mark.slow  # talks to real servers or processes

ACCESS_TTL = 300  # seconds: nothing expires unless the test moves the clock


@pytest.fixture(scope="module")
def oidc() -> Iterator[Oidc]:
    yield from make_oidc(accessTtl=ACCESS_TTL)


@pytest.fixture
async def protected(oidc: Oidc) -> AsyncIterator[ProtectedState]:
    async with serve_protected(oidc) as state:
        yield state


@dataclass
class _RecordingPrompter(ScriptedPrompter):
    codes: list[str] = field(default_factory=list)

    async def authorize(self, request):  # type: ignore[no-untyped-def]
        text = await super().authorize(request)
        assert text is not None
        self.codes.extend(parse_qs(urlparse(text).query)["code"])
        return text


async def test_login_refresh_and_errors_log_no_secrets(
    oidc: Oidc,
    protected: ProtectedState,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    allow_logs: AllowLogs,
) -> None:
    allow_logs(r"refused to refresh the sign-in \(HTTP 400, invalid_grant\)")
    # The SDK's own line for the refused refresh: this test calls through the manager,
    # outside a connection that would put it in the server's log.
    allow_logs(r"^Token refresh failed: 400$")
    verifiers: list[str] = []
    generate = sdk_oauth2.PKCEParameters.generate

    def recording_generate() -> sdk_oauth2.PKCEParameters:
        params = generate()
        verifiers.append(params.code_verifier)
        return params

    monkeypatch.setattr(sdk_oauth2.PKCEParameters, "generate", staticmethod(recording_generate))

    # A client registered by hand, its secret kept in the keyring as ${keyring:...}.
    async with httpx2.AsyncClient() as http:
        registered = (
            await http.post(
                f"{oidc.issuer}/reg",
                json={
                    "redirect_uris": ["http://127.0.0.1:1/mcp/oauth/callback"],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "token_endpoint_auth_method": "client_secret_basic",
                    "application_type": "native",
                },
            )
        ).json()
    client_secret = registered["client_secret"]
    await SecretStore().store_secret("OIDC_CLIENT_SECRET", client_secret)

    caplog.set_level(logging.DEBUG)
    # httpcore2's DEBUG wire trace prints raw headers of every request, the scripted
    # browser's redirects (with the code) included; Portico never turns it on.
    caplog.set_level(logging.INFO, logger="httpcore2")
    prompter = _RecordingPrompter(mode="paste", paste_shape="url")
    clock = Clock()  # expiry is decided on the manager's clock: moved, not waited for
    manager = AuthManager(prompter, endpoint_policy=None, clock=clock)
    spec = server_spec(
        "quiet",
        oidc.resource,
        client_id=registered["client_id"],
        client_secret="${keyring:OIDC_CLIENT_SECRET}",
    )
    await manager.login(spec, browser=False)
    storage = manager.storage_for(spec)
    first = await storage.raw_tokens()
    assert first is not None and first.refresh_token

    clock.advance(ACCESS_TTL + 1)
    assert await call_echo(manager, spec) == "echo: hi"  # refreshed with the client secret
    second = await storage.raw_tokens()
    assert second is not None and second.access_token != first.access_token

    # An error path too: a refused refresh and the NeedsAuth that follows.
    async with httpx2.AsyncClient() as http:
        await http.post(
            f"{oidc.issuer}/token/revocation",
            data={"token": second.refresh_token},
            auth=(registered["client_id"], client_secret),
        )
    clock.advance(ACCESS_TTL + 1)
    with pytest.raises(Exception) as caught:
        await manager.auth_for(spec, interactive=False)

    secrets = {
        "access token 1": first.access_token,
        "refresh token 1": first.refresh_token,
        "access token 2": second.access_token,
        "refresh token 2": second.refresh_token or "",
        "client secret": client_secret,
        **{f"code {i}": code for i, code in enumerate(prompter.codes)},
        **{f"verifier {i}": v for i, v in enumerate(verifiers)},
    }
    assert prompter.codes and verifiers
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    text += "\n" + str(caught.value)
    assert len(caplog.records) > 10  # the scan saw real traffic
    leaked = [name for name, value in secrets.items() if value and value in text]
    assert leaked == []
