"""AuthManager: one place that signs Portico in to OAuth-protected MCP servers.

``auth_for`` hands the connection an ``httpx2.Auth`` (the SDK's ``OAuthClientProvider``
with our storage and hand-off); ``login`` runs a sign-in now (browser or device code) and
checks that a token landed; ``logout`` forgets tokens and the client registration.

Background work (``interactive=False``) never opens a browser: where the SDK would start a
sign-in, ``NeedsAuth`` is raised instead, and a grant the server refused is not tried
again until the stored tokens change.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace as _replace
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlparse

import httpx2
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.auth.utils import create_client_registration_request, handle_registration_response
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from portico.auth import quirks
from portico.auth.device import DEVICE_GRANT, device_login
from portico.auth.discovery import Discovered, discover, probe, requires_auth
from portico.auth.errors import AuthError, NeedsOwnClient, own_client_message
from portico.auth.handoff import (
    LoginCancelled,
    LoginDenied,
    LoginTimeout,
    browser_handoff,
    login_wait,
    timeout_message,
)
from portico.auth.loopback import RedirectPlan, choose_port
from portico.auth.machine import (
    MACHINE_FLOWS,
    client_credentials_provider,
    cross_app_provider,
    is_machine_flow,
)
from portico.auth.netguard import OAuthNet
from portico.auth.provider import PorticoOAuthProvider
from portico.auth.secret_store import SecretStore
from portico.auth.token_storage import (
    PorticoTokenStorage,
    StagedTokenStorage,
    fingerprint,
    record_key,
)
from portico.config import secrets as config_secrets
from portico.config.masking import mask_text, mask_url
from portico.config.model import OAuthSpec, Scope, ServerSpec
from portico.paths import PROJECT_DIR_NAME
from portico.prompts import Notice, Prompter
from portico.runtime import sdklog
from portico.runtime.errors import NeedsAuth
from portico.runtime.serverlog import ServerLog

if TYPE_CHECKING:
    from portico.runtime.hooks import ConnectionHooks

log = logging.getLogger(__name__)

# A Client ID Metadata Document URL (HTTPS, non-root path) Portico may present to
# servers that support CIMD. Unset by default: only a URL you control can serve it.
CLIENT_METADATA_URL_ENV = "PORTICO_CLIENT_METADATA_URL"
# A stored sign-in keeps the discovery of its issuer this long: a process that connects
# with it sends the token at once instead of an unauthenticated probe and the metadata.
DISCOVERY_MAX_AGE = 24 * 3600.0

SecretLookup = Callable[[str], Awaitable[str | None]]
# (spec, url, *, mcp_pins=...) -> the host -> IPs pins to dial; raises to refuse
EndpointPolicy = Callable[..., Awaitable[object]]
PinLookup = Callable[[ServerSpec], Mapping[str, list[str]] | None]


def default_endpoint_policy() -> EndpointPolicy | None:
    """Vetting of every OAuth endpoint; a server's ``oauth.allow_private_endpoints``
    (local development) relaxes it for that server only."""
    from portico.policy.redirects import check_oauth_endpoint

    return check_oauth_endpoint


async def resolve_secret_text(text: str, lookup: SecretLookup, where: str) -> str:
    try:
        return await config_secrets.resolve(text, lookup_keyring=lookup, where=where)
    except config_secrets.SecretError as exc:
        raise AuthError(str(exc)) from exc


class _Handoff:
    """The redirect + callback handlers of one provider."""

    def __init__(
        self,
        manager: AuthManager,
        spec: ServerSpec,
        plan: RedirectPlan,
        port: int,
        *,
        interactive: bool,
        use_browser: bool,
        reauth: bool,
    ) -> None:
        self.manager = manager
        self.spec = spec
        self.plan = plan
        self.port = port
        self.interactive = interactive
        self.use_browser = use_browser
        self.reauth = reauth
        self.provider: PorticoOAuthProvider | None = None
        self._authorize_url: str | None = None

    async def redirect(self, authorize_url: str) -> None:
        if not self.interactive:
            missing = self._missing_scopes()
            if missing is not None:
                wanted = self.provider.context.client_metadata.scope if self.provider else None
                await self.manager.storage_for(self.spec).set_wanted_scope(wanted)
                raise NeedsAuth(_step_up_text(self.spec.name, missing))
            raise NeedsAuth(_sign_in_text(self.spec.name))
        issuer = self.provider.current_issuer() if self.provider else None
        self._authorize_url = quirks.authorize_url_extras(authorize_url, issuer)

    def _missing_scopes(self) -> list[str] | None:
        """On a scope step-up (a 403 insufficient_scope with a token held): the scopes the
        request needs beyond those granted; None when this is no step-up."""
        if self.provider is None:
            return None
        context = self.provider.context
        tokens = context.current_tokens
        if tokens is None or not context.client_metadata.scope:
            return None
        granted = set((tokens.scope or "").split())
        missing = [s for s in context.client_metadata.scope.split() if s not in granted]
        return missing or None

    def _moved(self, redirect_uri: str) -> None:
        # The token request must name the redirect URI the code was sent to.
        if self.provider is not None:
            self.provider.context.client_metadata.redirect_uris = [redirect_uri]  # type: ignore[list-item]

    async def callback(self) -> AuthorizationCodeResult:
        assert self._authorize_url is not None
        oauth = self.spec.oauth or OAuthSpec()
        result = await browser_handoff(
            server=self.spec.name,
            authorize_url=self._authorize_url,
            plan=self.plan,
            port=self.port,
            prompter=self.manager.prompter,
            wait_seconds=oauth.timeout,
            use_browser=self.use_browser,
            reauth=self.reauth,
            on_redirect_uri=self._moved,
        )
        metadata = self.provider.context.oauth_metadata if self.provider else None
        issuer = str(metadata.issuer) if metadata is not None else None
        supported = bool(metadata and metadata.authorization_response_iss_parameter_supported)
        try:
            iss = quirks.resolve_response_iss(result.iss, issuer, supported, server=self.spec.name)
        except quirks.IssuerError as exc:
            raise OAuthFlowError(str(exc)) from exc
        return AuthorizationCodeResult(code=result.code, state=result.state, iss=iss)


class AuthManager:
    def __init__(
        self,
        prompter: Prompter,
        *,
        store: SecretStore | None = None,
        lookup_keyring: SecretLookup | None = None,
        client_metadata_url: str | None = None,
        endpoint_policy: EndpointPolicy | Literal["default"] | None = "default",
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``endpoint_policy(spec, url)`` vets each OAuth endpoint before it is contacted
        (default: ``portico.policy.redirects.check_oauth_endpoint``; None: no check, for
        tests whose authorization server is a private address on another port).
        ``clock`` (wall-clock seconds) decides when a stored token has expired."""
        self.prompter = prompter
        self.clock = clock
        # The process's secret store (``build_services`` passes its one); a manager made
        # on its own (tests, one-off tools) gets a store of its own.
        self.store = store if store is not None else SecretStore()
        self.lookup_keyring: SecretLookup = lookup_keyring or self.store.lookup_secret
        if endpoint_policy == "default":
            endpoint_policy = default_endpoint_policy()
        self.endpoint_policy: EndpointPolicy | None = endpoint_policy
        self.client_metadata_url = client_metadata_url or os.environ.get(CLIENT_METADATA_URL_ENV)
        self._told_insecure = False
        # The trust review's DNS pins (``ConnectionHooks.pinned_addresses``, taken over by
        # ``hooks()``): OAuth requests to the MCP origin dial these, never a fresh lookup.
        self.pinned_addresses: PinLookup | None = None

    # --- public API -----------------------------------------------------------------------

    def use_client_metadata_url(self, url: str | None) -> None:
        """The config's ``oauth.client_metadata_url`` (CIMD): the client id offered to
        authorization servers that advertise support; unset, the environment's
        ``PORTICO_CLIENT_METADATA_URL`` (development) or dynamic registration."""
        self.client_metadata_url = url or os.environ.get(CLIENT_METADATA_URL_ENV)

    def hooks(self, base: ConnectionHooks | None = None) -> ConnectionHooks:
        """``base`` (or empty hooks) with ``auth_for`` and ``lookup_secret`` set."""
        from dataclasses import replace as _replace

        from portico.runtime.hooks import ConnectionHooks as _Hooks

        hooks = _replace(base) if base is not None else _Hooks()
        hooks.auth_for = self.auth_for
        hooks.lookup_secret = self.lookup_keyring
        hooks.auth_stamp = self.auth_stamp
        if self.pinned_addresses is None and hooks.pinned_addresses is not None:
            self.pinned_addresses = hooks.pinned_addresses
        return hooks

    async def auth_stamp(self, spec: ServerSpec) -> str | None:
        """A fingerprint of the stored tokens (None without any): it changes with every
        login or refresh, in this process or another one sharing the storage."""
        if not spec.url:
            return None
        return fingerprint(await self.storage_for(spec).raw_tokens())

    def storage_for(self, spec: ServerSpec) -> PorticoTokenStorage:
        return PorticoTokenStorage(
            spec.name, spec.url or "", self.store, key=token_key(spec), clock=self.clock
        )

    async def auth_for(self, spec: ServerSpec, interactive: bool = False) -> httpx2.Auth | None:
        """The ``httpx2.Auth`` for an OAuth server's HTTP client, None without ``oauth``.

        ``interactive=False`` (reconnects, reloads, probes): never starts a sign-in; raises
        ``NeedsAuth`` when the stored grant was already refused.
        """
        if not spec.url:
            return None
        storage = self.storage_for(spec)
        if spec.oauth is None:
            # Sign-in by discovery: a server without `oauth` that challenged and was then
            # signed in to (`portico mcp login`) uses that sign-in with default settings.
            if await storage.raw_tokens() is None:
                return None
            spec = _with_oauth(spec, OAuthSpec())
        if is_machine_flow(spec):
            return await self._machine_provider(spec, storage)
        if not interactive and await storage.is_rejected():
            raise NeedsAuth(
                f"The sign-in for server '{spec.name}' was refused by its authorization server; "
                f"run `portico mcp login {spec.name}` to sign in again.",
            )
        provider = await self._provider(spec, storage, interactive=interactive, use_browser=True)
        if await storage.raw_tokens() is not None:
            found = await self._prime(spec, storage, provider)
            if found is not None and not interactive:
                await self._refresh_if_expired(spec, provider)
        elif (
            not interactive and spec.url and await requires_auth(spec.url, self._net(spec).client())
        ):
            raise NeedsAuth(_sign_in_text(spec.name))
        return provider

    async def login(self, spec: ServerSpec, flow: str | None = None, browser: bool = True) -> None:
        """Sign in now; return once a token is stored, else raise ``AuthError``."""
        if not spec.url:
            raise AuthError(
                f"Server '{spec.name}' is not an HTTP server; it has nothing to sign in to."
            )
        oauth = spec.oauth or OAuthSpec()
        if spec.oauth is None:
            spec = _with_oauth(spec, oauth)
        await self._tell_if_insecure(spec.name)
        storage = self.storage_for(spec)
        wait = login_wait(oauth.timeout, spec.connect_timeout)
        chosen = flow or oauth.flow
        # The SDK logs its own traceback for a sign-in that ends in an error; it belongs in
        # the server's log file, and the person gets our one line.
        login_log = ServerLog(spec.name)
        try:
            with sdklog.bind(login_log):
                got_tokens = await self._login_flow(spec, storage, chosen, oauth, browser, wait)
        finally:
            login_log.close()
        if not got_tokens:
            if chosen in MACHINE_FLOWS:
                raise AuthError(
                    f"Signing in to '{spec.name}' with oauth.flow = {chosen} stored no token: "
                    "the server did not ask for one. Check its url."
                )
            raise NeedsOwnClient(own_client_message(spec.name, "no token was issued"))

    async def _login_flow(
        self,
        spec: ServerSpec,
        storage: PorticoTokenStorage,
        chosen: str,
        oauth: OAuthSpec,
        browser: bool,
        wait: float,
    ) -> bool:
        """Run the chosen sign-in; True once new tokens are stored."""
        got_tokens = False
        try:
            async with asyncio.timeout(wait):
                if chosen in MACHINE_FLOWS:
                    machine = _with_oauth(spec, _replace(oauth, flow=chosen))  # type: ignore[arg-type]
                    got_tokens = await self._machine_login(machine)
                elif chosen == "device":
                    await self._device_login(spec, storage)
                    got_tokens = await storage.has_tokens()
                else:
                    got_tokens = await self._browser_login(spec, storage, browser)
        except TimeoutError as exc:
            if isinstance(exc, LoginTimeout):
                raise AuthError(str(exc)) from exc
            raise AuthError(timeout_message(spec.name, wait)) from exc
        except LoginCancelled as exc:
            raise AuthError(str(exc)) from exc
        except LoginDenied as exc:
            raise AuthError(f"Signing in to '{spec.name}' ended: {exc}") from None
        except OAuthRegistrationError as exc:
            raise NeedsOwnClient(own_client_message(spec.name, _short(exc))) from exc
        except (OAuthFlowError, OAuthTokenError) as exc:
            raise AuthError(f"Signing in to '{spec.name}' failed: {_short(exc)}") from exc
        except httpx2.HTTPError as exc:
            raise AuthError(
                f"Cannot reach server '{spec.name}' at {mask_url(spec.url or '')}: "
                f"{mask_text(str(exc))}"
            ) from exc
        return got_tokens

    async def logout(self, spec: ServerSpec) -> None:
        await self.storage_for(spec).clear()

    async def has_token(self, spec: ServerSpec) -> bool:
        return await self.storage_for(spec).has_tokens()

    # --- machine-to-machine grants -----------------------------------------------------------

    async def _machine_provider(
        self, spec: ServerSpec, storage: PorticoTokenStorage
    ) -> httpx2.Auth:
        oauth = spec.oauth or OAuthSpec()
        net = self._net(spec)
        check = net.vet

        async def secret_text(text: str, key: str) -> str:
            where = f"{spec.source}: server '{spec.name}', key oauth.{key}"
            return await resolve_secret_text(text, self.lookup_keyring, where)

        if oauth.flow == "client_credentials":
            machine = await client_credentials_provider(spec, storage, secret_text, check)
            machine.side_send = net.send_elsewhere
            return machine
        issuer = oauth.issuer
        if issuer is None:
            assert spec.url is not None
            async with net.client() as http:
                try:
                    issuer = (await discover(spec.name, spec.url, http)).issuer
                except AuthError as exc:
                    raise AuthError(
                        f"{exc} Set oauth.issuer on server '{spec.name}' to name its "
                        "authorization server."
                    ) from exc
        cross = await cross_app_provider(spec, storage, secret_text, check, net.client, issuer)
        cross.side_send = net.send_elsewhere
        return cross

    async def _machine_login(self, spec: ServerSpec) -> bool:
        """Run the grant now (nobody is asked); its token replaces the stored one only
        once it was granted."""
        assert spec.url is not None
        staged = StagedTokenStorage(self.storage_for(spec))
        provider = await self._machine_provider(spec, staged)
        try:
            async with self._net(spec).client(auth=provider) as http:
                await http.post(
                    spec.url,
                    json=_INITIALIZE,
                    headers={"Accept": "application/json, text/event-stream"},
                )
        finally:
            committed = await staged.commit()
        return committed

    # --- building the provider -------------------------------------------------------------

    async def _client_secret(self, spec: ServerSpec) -> str | None:
        oauth = spec.oauth
        if oauth is None or not oauth.client_secret:
            return None
        where = f"{spec.source}: server '{spec.name}', key oauth.client_secret"
        return await resolve_secret_text(oauth.client_secret, self.lookup_keyring, where)

    async def _provider(
        self,
        spec: ServerSpec,
        storage: PorticoTokenStorage,
        *,
        interactive: bool,
        use_browser: bool,
        reauth: bool = False,
    ) -> PorticoOAuthProvider:
        assert spec.url is not None
        oauth = spec.oauth or OAuthSpec()
        plan = RedirectPlan.from_spec(oauth)
        port = choose_port(plan)
        redirect_uri = plan.uri_for(port)
        secret = await self._client_secret(spec)
        metadata = OAuthClientMetadata(
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            client_name=quirks.client_name_for(spec.url, oauth.client_name),
            scope=oauth.scope,
            token_endpoint_auth_method="client_secret_post" if secret else "none",
        )
        await self._apply_client(spec, storage, secret, redirect_uri, interactive)
        net = self._net(spec)
        handoff = _Handoff(
            self,
            spec,
            plan,
            port,
            interactive=interactive,
            use_browser=use_browser,
            reauth=reauth,
        )
        provider = PorticoOAuthProvider(
            server=spec.name,
            server_url=spec.url,
            client_metadata=metadata,
            storage=storage,
            redirect_handler=handoff.redirect,
            callback_handler=handoff.callback,
            client_metadata_url=self.client_metadata_url,
            scope_override=oauth.scope,
            endpoint_check=net.vet,
        )
        provider.side_send = net.send_elsewhere
        handoff.provider = provider
        return provider

    async def _apply_client(
        self,
        spec: ServerSpec,
        storage: PorticoTokenStorage,
        secret: str | None,
        redirect_uri: str,
        interactive: bool,
    ) -> None:
        """A configured client wins; before a sign-in, a registration made for another
        redirect URI is redone (a loopback port change alone does not count: RFC 8252 §7.3
        has servers accept any port). Refreshing never needs the redirect URI."""
        oauth = spec.oauth or OAuthSpec()
        stored = await storage.get_client_info()
        if oauth.client_id:
            if (
                stored is None
                or stored.client_id != oauth.client_id
                or stored.client_secret != secret
            ):
                await storage.set_client_info(
                    OAuthClientInformationFull(
                        client_id=oauth.client_id,
                        client_secret=secret,
                        token_endpoint_auth_method="client_secret_basic" if secret else "none",
                        redirect_uris=[redirect_uri],  # type: ignore[list-item]
                    )
                )
            return
        if (
            interactive
            and stored is not None
            and stored.redirect_uris
            and stored.client_id != self.client_metadata_url
            and not any(_same_redirect(redirect_uri, str(uri)) for uri in stored.redirect_uris)
        ):
            log.info("server %r: the redirect URI changed; registering again", spec.name)
            await storage.forget_client()

    def _net(self, spec: ServerSpec) -> OAuthNet:
        """Vetted, pinned HTTP for ``spec``'s OAuth requests (see ``portico.auth.netguard``)."""
        pins = self.pinned_addresses(spec) if self.pinned_addresses is not None else None
        return OAuthNet(spec, self.endpoint_policy, pins)

    def _endpoint_check(self, spec: ServerSpec) -> Callable[[str], Awaitable[None]]:
        return self._net(spec).vet

    async def _prime(
        self, spec: ServerSpec, storage: PorticoTokenStorage, provider: PorticoOAuthProvider
    ) -> Discovered | None:
        """Discover the authorization server now, so a refresh goes to the issuer that
        granted the token (and only to it)."""
        assert spec.url is not None
        cached = await storage.cached_discovery(DISCOVERY_MAX_AGE)
        found = Discovered.from_cache(cached) if cached is not None else None
        if found is None:
            try:
                async with self._net(spec).client() as http:
                    found = await discover(spec.name, spec.url, http)
            except AuthError as exc:
                log.info("server '%s': discovery before connecting failed: %s", spec.name, exc)
                return None
            if await storage.stored_issuer() == found.issuer:
                await storage.cache_discovery(found.issuer, found.to_cache())
        await storage.verify_issuer(found.issuer)
        context = provider.context
        context.protected_resource_metadata = found.prm
        context.auth_server_url = found.auth_server_url
        context.oauth_metadata = found.metadata
        return found

    async def _refresh_if_expired(self, spec: ServerSpec, provider: PorticoOAuthProvider) -> None:
        """Refresh an expired token before connecting, so a dead grant shows up here as
        ``NeedsAuth`` rather than deep inside the transport."""
        await provider._initialize()
        context = provider.context
        if context.is_token_valid():
            return
        if context.can_refresh_token():
            async with self._net(spec).client() as http:
                response = await http.send(await provider._refresh_token())
                if await provider._handle_refresh_response(response):
                    return
        raise NeedsAuth(_sign_in_text(spec.name, expired=True))

    # --- logins --------------------------------------------------------------------------------

    async def _browser_login(
        self, spec: ServerSpec, storage: PorticoTokenStorage, use_browser: bool
    ) -> bool:
        assert spec.url is not None
        held = await storage.raw_tokens()
        reauth = held is not None  # "sign in again" rather than a first sign-in
        wanted = await storage.wanted_scope()
        # The new grant goes to a staged record: the working tokens stay until it succeeds.
        staged = StagedTokenStorage(storage)
        provider = await self._provider(
            spec, staged, interactive=True, use_browser=use_browser, reauth=reauth
        )
        if wanted:  # a step-up: ask for what was granted plus what a request needed
            oauth = spec.oauth or OAuthSpec()
            provider.scope_override = _union(oauth.scope, held.scope if held else None, wanted)
        try:
            async with self._net(spec).client(auth=provider) as http:
                # A stateless request first: a 2026 server challenges it (with the scope it
                # wants) even where it lets a legacy initialize through or answers it with 400.
                await probe(http, spec.url)
                if not await staged.has_tokens():
                    # Not challenged: sign in anyway, as the protected resource's metadata says.
                    provider.force_sign_in = True
                    await http.post(
                        spec.url,
                        json=_INITIALIZE,
                        headers={"Accept": "application/json, text/event-stream"},
                    )
        finally:
            committed = await staged.commit()
        if committed:
            await storage.set_wanted_scope(None)
            await self._keep_discovery(spec, storage, provider)
        return committed

    async def _keep_discovery(
        self, spec: ServerSpec, storage: PorticoTokenStorage, provider: PorticoOAuthProvider
    ) -> None:
        """What the sign-in discovered, kept with its tokens (see ``_prime``)."""
        context = provider.context
        metadata = context.oauth_metadata
        if metadata is None or await storage.stored_issuer() != str(metadata.issuer):
            return
        prm = context.protected_resource_metadata
        resource = str(prm.resource) if prm and prm.resource else (spec.url or "")
        found = Discovered(prm, context.auth_server_url, metadata, resource, {})
        await storage.cache_discovery(found.issuer, found.to_cache())

    async def _device_login(self, spec: ServerSpec, storage: PorticoTokenStorage) -> None:
        assert spec.url is not None
        oauth = spec.oauth or OAuthSpec()
        async with self._net(spec).client() as http:
            found = await discover(spec.name, spec.url, http)
            endpoint = found.device_authorization_endpoint
            if endpoint is None:
                raise AuthError(
                    f"Server '{spec.name}' does not offer device-code login (its authorization "
                    f"server {found.issuer} advertises no device_authorization_endpoint). "
                    f"Run `portico mcp login {spec.name}` without --flow device."
                )
            await storage.verify_issuer(found.issuer)
            client = await self._device_client(spec, storage, http, found)
            scope = oauth.scope
            if scope is None:
                if found.prm is not None and found.prm.scopes_supported:
                    scope = " ".join(found.prm.scopes_supported)
                elif found.metadata.scopes_supported:
                    scope = " ".join(found.metadata.scopes_supported)
            tokens = await device_login(
                server=spec.name,
                http=http,
                device_endpoint=str(endpoint),
                token_endpoint=str(found.metadata.token_endpoint),
                client=client,
                scope=scope,
                resource=found.resource,
                prompter=self.prompter,
                wait_seconds=oauth.timeout,
            )
            storage.current_issuer = lambda: found.issuer
            await storage.set_tokens(tokens)

    async def _device_client(
        self,
        spec: ServerSpec,
        storage: PorticoTokenStorage,
        http: httpx2.AsyncClient,
        found: Discovered,
    ) -> OAuthClientInformationFull:
        oauth = spec.oauth or OAuthSpec()
        if oauth.client_id:
            secret = await self._client_secret(spec)
            return OAuthClientInformationFull(
                client_id=oauth.client_id,
                client_secret=secret,
                token_endpoint_auth_method="client_secret_basic" if secret else "none",
            )
        stored = await storage.get_client_info()
        if (
            stored is not None
            and DEVICE_GRANT in stored.grant_types
            and stored.issuer in (None, found.issuer)
        ):
            return stored
        if found.metadata.registration_endpoint is None:
            raise NeedsOwnClient(own_client_message(spec.name, "it offers no client registration"))
        plan = RedirectPlan.from_spec(oauth)
        metadata = OAuthClientMetadata(
            redirect_uris=[plan.uri_for(choose_port(plan))],  # type: ignore[list-item]
            client_name=quirks.client_name_for(spec.url or "", oauth.client_name),
            grant_types=["authorization_code", "refresh_token", DEVICE_GRANT],
            token_endpoint_auth_method="none",
        )
        request = create_client_registration_request(found.metadata, metadata, spec.url or "")
        response = await http.send(request)
        client = await handle_registration_response(response)
        client.issuer = found.issuer
        await storage.set_client_info(client)
        return client

    async def _tell_if_insecure(self, server: str) -> None:
        notice = self.store.insecure_notice()
        if notice and not self._told_insecure and self.store.storage_kind() == "memory":
            self._told_insecure = True
            try:
                await self.prompter.notify(Notice(level="warning", text=notice, server=server))
            except Exception:
                log.warning("%s", notice)


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "portico-login", "version": "1"},
    },
}


def _step_up_text(server: str, missing: list[str]) -> str:
    scopes = " ".join(missing)
    return (
        f"Server '{server}' needs more permission for this request (missing scope: {scopes});"
        f" run `portico mcp login {server}` to grant it."
    )


def _union(*scopes: str | None) -> str | None:
    seen: list[str] = []
    for scope in scopes:
        for item in (scope or "").split():
            if item not in seen:
                seen.append(item)
    return " ".join(seen) or None


def token_key(spec: ServerSpec) -> str:
    """The internal record holding ``spec``'s sign-in.

    A global server's is keyed by its name. A project server's is its own per project
    folder, so a cloned project never reads (nor overwrites) your sign-in to a server of
    the same name; only a project server that replaces a global one with exactly the same
    target shares that server's sign-in.
    """
    if spec.source.scope is not Scope.PROJECT:
        return record_key(spec.name)
    if spec.replaces is not None and spec.replaces.same_target:
        return record_key(spec.name)
    folder = spec.source.path.parent
    if folder.name == PROJECT_DIR_NAME:
        folder = folder.parent
    tag = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return record_key(spec.name, f"project-{tag}")


def _sign_in_text(server: str, *, expired: bool = False) -> str:
    why = "its sign-in expired and could not be renewed" if expired else "it needs a sign-in"
    return (
        f"Server '{server}' is waiting: {why}. Run `portico mcp login {server}` or use "
        "Sign in in the app."
    )


def _same_redirect(a: str, b: str) -> bool:
    pa, pb = urlparse(a), urlparse(b)
    if pa.hostname in LOOPBACK_HOSTS and pa.scheme == "http":
        return (pa.scheme, pa.hostname, pa.path) == (pb.scheme, pb.hostname, pb.path)
    return a == b


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _with_oauth(spec: ServerSpec, oauth: OAuthSpec) -> ServerSpec:
    from dataclasses import replace

    return replace(spec, oauth=oauth)


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) < 400 else text[:400] + "…"
