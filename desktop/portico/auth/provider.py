"""Portico's ``OAuthClientProvider``: the SDK's flow with our hooks at its narrowest points.

- ``_initialize``: stored tokens carry the time left, so an expired one is refreshed
  instead of being sent (the SDK would otherwise treat a loaded token as fresh).
- ``_handle_refresh_response``: an ``invalid_grant`` marks the stored grant rejected.
- ``_perform_authorization``: ``oauth.scope`` replaces the selected scope.
- ``_auth_flow`` (``VettedFlow``, shared with the machine-grant providers): vets every
  OAuth request with the network policy (no private OAuth endpoint off the MCP origin)
  and remembers which URL each response came from, for the RFC 8414 §3.3 path/origin
  exception (``quirks.metadata_issuer_ok``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.auth import oauth2 as sdk_oauth2
from mcp.client.auth.oauth2 import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthMetadata

from portico.auth import quirks
from portico.auth.token_storage import PorticoTokenStorage

log = logging.getLogger(__name__)

# Not exported by the SDK; we wrap it (docs/platform-notes.md, "SDK privates").
_sdk_validate_metadata_issuer = sdk_oauth2.validate_metadata_issuer  # type: ignore[attr-defined]


def _validate_metadata_issuer(oauth_metadata: OAuthMetadata, expected_issuer: str) -> None:
    fetched = quirks.metadata_fetch_url.get()
    issuer = str(oauth_metadata.issuer)
    if (
        fetched is not None
        and issuer != expected_issuer
        and quirks.metadata_issuer_ok(issuer, expected_issuer, fetched)
    ):
        log.info(
            "accepting authorization server metadata at %s that names its origin %s as issuer "
            "(advertised as %s)",
            fetched,
            issuer,
            expected_issuer,
        )
        return
    _sdk_validate_metadata_issuer(oauth_metadata, expected_issuer)


# The SDK looks this name up in its module at call time; outside our provider the context
# variable is unset and the SDK's check runs unchanged.
sdk_oauth2.validate_metadata_issuer = _validate_metadata_issuer  # type: ignore[attr-defined]


class VettedFlow:
    """Mixin for an SDK auth provider: vets every OAuth request (discovery, registration,
    token) with ``endpoint_check`` and remembers which URL each response came from, for
    the RFC 8414 §3.3 path/origin exception. Put it first in the bases."""

    endpoint_check: Callable[[str], Awaitable[object]] | None = None
    # Sends the flow's own requests (discovery, registration, token) for other origins
    # through a pinned, vetted client (``portico.auth.netguard.OAuthNet.send_elsewhere``)
    # instead of the MCP connection's transport; where it (or it is None) returns None,
    # the request is yielded to whichever client runs the flow.
    side_send: Callable[[httpx2.Request], Awaitable[httpx2.Response | None]] | None = None

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)  # type: ignore[misc]
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is not request and self.endpoint_check is not None:
                    # Discovery, registration and token requests: network policy first.
                    await self.endpoint_check(str(outgoing.url))
                response = None
                if outgoing is not request and self.side_send is not None:
                    response = await self.side_send(outgoing)
                if response is None:
                    response = yield outgoing
                same = str(response.request.url) == str(outgoing.url)
                token = quirks.metadata_fetch_url.set(str(outgoing.url) if same else None)
                try:
                    outgoing = await flow.asend(response)
                finally:
                    quirks.metadata_fetch_url.reset(token)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()


class PorticoOAuthProvider(VettedFlow, OAuthClientProvider):
    def __init__(
        self,
        *,
        server: str,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        storage: PorticoTokenStorage,
        redirect_handler: Callable[[str], Awaitable[None]],
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
        client_metadata_url: str | None = None,
        scope_override: str | None = None,
        endpoint_check: Callable[[str], Awaitable[object]] | None = None,
    ) -> None:
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata,
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            client_metadata_url=client_metadata_url,
        )
        self.server = server
        self.storage = storage
        self.scope_override = scope_override
        self.refresh_rejected = False
        # `portico mcp login`: sign in even when the server lets the first request through
        # (or answers a legacy initialize with 400): the flow then runs as for a 401.
        self.force_sign_in = False
        self.endpoint_check = endpoint_check
        storage.current_issuer = self.current_issuer

    def current_issuer(self) -> str | None:
        metadata = self.context.oauth_metadata
        return str(metadata.issuer) if metadata is not None else None

    async def _initialize(self) -> None:
        await super()._initialize()
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            self.context.update_token_expiry(tokens)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        ok = await super()._handle_refresh_response(response)
        if not ok:
            error = _oauth_error(response)
            log.warning(
                "server '%s': the authorization server refused to refresh the sign-in "
                "(HTTP %s, %s)",
                self.server,
                response.status_code,
                error or "no error code",
            )
            if response.status_code in (400, 401):
                self.refresh_rejected = True
                await self.storage.mark_rejected()
        return ok

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """A 401 for an access token that has not expired yet (revoked, or the server's
        clock differs): the SDK would go straight to a new sign-in. Try the refresh token
        first, once: the token is marked expired and the flow runs again, refreshing."""
        flow = super()._auth_flow(request)
        retried = False
        try:
            outgoing = await flow.__anext__()
            while True:
                sent_token = outgoing is request and "Authorization" in request.headers
                response = yield outgoing
                if outgoing is request and self.force_sign_in:
                    self.force_sign_in = False
                    if response.status_code != 401 and not insufficient_scope(response):
                        response = _challenge(request, self.scope_override)
                if (
                    sent_token
                    and not retried
                    and response.status_code == 401
                    and self._can_refresh_now()
                ):
                    retried = True
                    await flow.aclose()
                    log.info(
                        "server '%s': the access token was refused; refreshing it", self.server
                    )
                    self.context.token_expiry_time = 1.0  # long past (0 would mean "never")
                    del request.headers["Authorization"]
                    flow = super()._auth_flow(request)
                    outgoing = await flow.__anext__()
                    continue
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _can_refresh_now(self) -> bool:
        tokens = self.context.current_tokens
        return bool(
            tokens is not None
            and tokens.refresh_token
            and self.context.is_token_valid()
            and self.context.client_info is not None
        )

    async def _perform_authorization(self) -> httpx2.Request:
        if self.scope_override:
            self.context.client_metadata.scope = self.scope_override
        self._fit_client_auth_method()
        return await super()._perform_authorization()

    def _fit_client_auth_method(self) -> None:
        """A client registered by hand (config client_id + client_secret) authenticates
        the way the server's metadata says it accepts (basic preferred, else post)."""
        client = self.context.client_info
        if client is not None and client.client_secret and not client.issuer:
            fit_secret_method(self.context)


def insufficient_scope(response: httpx2.Response) -> bool:
    from mcp.client.auth.utils import extract_field_from_www_auth

    return (
        response.status_code == 403
        and extract_field_from_www_auth(response, "error") == "insufficient_scope"
    )


def _challenge(request: httpx2.Request, scope: str | None) -> httpx2.Response:
    """The 401 a server that challenged at once would have sent (discovery then follows
    RFC 9728's well-known addresses)."""
    header = "Bearer" + (f' scope="{scope}"' if scope else "")
    return httpx2.Response(401, headers={"WWW-Authenticate": header}, request=request)


def _oauth_error(response: httpx2.Response) -> str | None:
    try:
        body: Any = json.loads(response.content or b"{}")
    except (ValueError, httpx2.ResponseNotRead):
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, str) else None


def fit_secret_method(context: Any) -> None:
    """Make a secret-holding client use a token endpoint auth method the server accepts:
    client_secret_basic (RFC 6749 §2.3.1) when listed, else client_secret_post."""
    client = context.client_info
    metadata = context.oauth_metadata
    if client is None or metadata is None:
        return
    supported = metadata.token_endpoint_auth_methods_supported
    if not supported or client.token_endpoint_auth_method in supported:
        return
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            client.token_endpoint_auth_method = method
            return
