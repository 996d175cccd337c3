"""Device-code login (RFC 8628): no browser on this machine, no listener.

Show the verification URL and user code through ``Prompter.device_code``, poll the token
endpoint at the given interval, slow down when told (``slow_down`` adds 5 s), stop at
expiry. Each poll's outcome is reported in plain words on ``request.status`` so the face
can show the real polling state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import httpx2
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from portico.auth.errors import AuthError
from portico.prompts import DeviceCodeRequest, Prompter

log = logging.getLogger(__name__)

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class DeviceFlowError(AuthError):
    pass


def _client_auth(
    client: OAuthClientInformationFull, data: dict[str, str]
) -> tuple[dict[str, str], httpx2.BasicAuth | None]:
    data = {**data, "client_id": client.client_id}
    method = client.token_endpoint_auth_method
    if client.client_secret and method == "client_secret_basic":
        return data, httpx2.BasicAuth(client.client_id, client.client_secret)
    if client.client_secret and method in ("client_secret_post", None):
        data["client_secret"] = client.client_secret
    return data, None


async def device_login(
    *,
    server: str,
    http: httpx2.AsyncClient,
    device_endpoint: str,
    token_endpoint: str,
    client: OAuthClientInformationFull,
    scope: str | None,
    resource: str | None,
    prompter: Prompter,
    wait_seconds: float,
    slow_down_step: float = 5.0,  # RFC 8628 §3.5: slow_down adds 5 seconds
) -> OAuthToken:
    """Run RFC 8628 to the end; return the tokens or raise ``DeviceFlowError``."""
    form: dict[str, str] = {}
    if scope:
        form["scope"] = scope
    if resource:
        form["resource"] = resource
    data, auth = _client_auth(client, form)
    response = await http.post(device_endpoint, data=data, auth=auth or httpx2.USE_CLIENT_DEFAULT)
    if response.status_code != 200:
        raise DeviceFlowError(
            f"Server '{server}' refused to start a device login (HTTP {response.status_code}: "
            f"{_error_of(response)})."
        )
    body = response.json()
    device_code = body["device_code"]
    interval = float(body.get("interval") or 5)
    expires_in = float(body.get("expires_in") or wait_seconds)
    request = DeviceCodeRequest(
        server=server,
        verification_uri=body["verification_uri"],
        user_code=body["user_code"],
        verification_uri_complete=body.get("verification_uri_complete"),
        expires_in=expires_in,
        interval=interval,
    )
    status = request.status
    status.set(waiting_text(0, interval))
    shown = asyncio.ensure_future(prompter.device_code(request))
    deadline = time.monotonic() + min(expires_in, wait_seconds)
    checks = 0
    try:
        while True:
            if shown.done():
                shown.result()  # raises Refused if the face cannot show it
                raise DeviceFlowError(f"Device login to '{server}' was cancelled.")
            if time.monotonic() + interval > deadline:
                status.set(EXPIRED_TEXT)
                raise DeviceFlowError(
                    f"The device code for '{server}' expired before it was approved; run "
                    "the login again."
                )
            await asyncio.wait({shown}, timeout=interval)
            if shown.done():
                continue
            data, auth = _client_auth(
                client, {"grant_type": DEVICE_GRANT, "device_code": device_code}
            )
            if resource:
                data["resource"] = resource
            token = await http.post(
                token_endpoint, data=data, auth=auth or httpx2.USE_CLIENT_DEFAULT
            )
            checks += 1
            if token.status_code == 200:
                tokens = OAuthToken.model_validate(token.json())
                status.set(APPROVED_TEXT)
                return tokens
            error = _error_of(token)
            if error == "authorization_pending":
                status.set(waiting_text(checks, interval))
                continue
            if error == "slow_down":
                interval += slow_down_step
                status.set(slow_down_text(interval))
                continue
            if error == "expired_token":
                status.set(EXPIRED_TEXT)
                raise DeviceFlowError(
                    f"The device code for '{server}' expired before it was approved; run "
                    "the login again."
                )
            if error == "access_denied":
                status.set(DENIED_TEXT)
                raise DeviceFlowError(f"The device login to '{server}' was denied.")
            status.set(f"The sign-in failed (HTTP {token.status_code}: {error}).")
            raise DeviceFlowError(
                f"Device login to '{server}' failed (HTTP {token.status_code}: {error})."
            )
    finally:
        if not shown.done():
            shown.cancel()
        with contextlib.suppress(BaseException):
            await shown


APPROVED_TEXT = "Approved. Finishing the sign-in…"
DENIED_TEXT = "The sign-in was denied on the other device."
EXPIRED_TEXT = "The code expired before it was approved. Start the sign-in again."


def waiting_text(checks: int, interval: float) -> str:
    if checks == 0:
        return f"Waiting for you to approve (checking every {interval:g} s)…"
    times = "once" if checks == 1 else f"{checks} times"
    return f"Waiting for you to approve (checked {times}, every {interval:g} s)…"


def slow_down_text(interval: float) -> str:
    return f"Slowing down: the server asked to poll every {interval:g} s."


def _error_of(response: httpx2.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return "no error code"
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return body["error"]
    return "no error code"
