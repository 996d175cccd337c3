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
from typing import Any

import httpx2
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

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
    body = _json_object(response, server, device_endpoint, "device authorization")
    missing = [k for k in ("device_code", "user_code", "verification_uri") if not body.get(k)]
    if missing:
        raise DeviceFlowError(
            f"Server '{server}' answered the device authorization at {device_endpoint} "
            f"without {', '.join(missing)}; the server does not support device login "
            "properly: use the browser login instead."
        )
    try:
        device_code = str(body["device_code"])
        interval = float(body.get("interval") or 5)
        expires_in = float(body.get("expires_in") or wait_seconds)
        request = DeviceCodeRequest(
            server=server,
            verification_uri=str(body["verification_uri"]),
            user_code=str(body["user_code"]),
            verification_uri_complete=body.get("verification_uri_complete"),
            expires_in=expires_in,
            interval=interval,
        )
    except (TypeError, ValueError) as exc:
        raise DeviceFlowError(
            f"Server '{server}' answered the device authorization at {device_endpoint} "
            f"with an invalid value ({exc}); use the browser login instead."
        ) from exc
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
                try:
                    tokens = _tokens(token, server, token_endpoint)
                except DeviceFlowError:
                    status.set("The sign-in failed: the server's token response was invalid.")
                    raise
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
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, str) else "no error code"


def _json_object(
    response: httpx2.Response, server: str, endpoint: str, what: str
) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError as exc:
        raise DeviceFlowError(
            f"Server '{server}' answered the {what} at {endpoint} with a body that is not "
            f"JSON ({_preview(response)}); check the server's OAuth endpoints."
        ) from exc
    if not isinstance(body, dict):
        raise DeviceFlowError(
            f"Server '{server}' answered the {what} at {endpoint} with JSON that is not an "
            f"object ({_preview(response)}); check the server's OAuth endpoints."
        )
    return body


def _tokens(response: httpx2.Response, server: str, endpoint: str) -> OAuthToken:
    body = _json_object(response, server, endpoint, "token request")
    try:
        return OAuthToken.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise DeviceFlowError(
            f"Server '{server}' answered the token request at {endpoint} with an invalid "
            f"token response ({problems}); check the server's OAuth endpoints."
        ) from exc


def _preview(response: httpx2.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    if not text:
        return "empty body"
    return repr(text[:80] + ("…" if len(text) > 80 else ""))
