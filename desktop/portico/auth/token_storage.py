"""The SDK's ``TokenStorage`` over the :class:`SecretStore`'s internal records, one per server.

The record is keyed by server name and remembers the URL it was made for: a changed URL
means a new login (the old record is ignored and replaced). Refresh tokens are bound to
the issuer that granted them: ``get_tokens`` hands a refresh token out only once this
process has discovered that same issuer again (``verify_issuer``); a different issuer
drops it for good, while the access token keeps working until it expires.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from portico.auth.secret_store import TOKEN_PREFIX, SecretStore

log = logging.getLogger(__name__)


def record_key(server: str, scope_tag: str | None = None) -> str:
    """The internal record of ``server``'s sign-in; ``scope_tag`` separates a project
    server from a global one of the same name."""
    return f"{TOKEN_PREFIX}{server}" + (f"@{scope_tag}" if scope_tag else "")


def fingerprint(tokens: OAuthToken | None) -> str | None:
    if tokens is None:
        return None
    blob = f"{tokens.access_token}\0{tokens.refresh_token or ''}"
    return hashlib.sha256(blob.encode()).hexdigest()


class PorticoTokenStorage:
    """Implements ``mcp.client.auth.TokenStorage`` for one server."""

    def __init__(
        self,
        server: str,
        url: str,
        store: SecretStore,
        *,
        key: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server = server
        self.url = url
        self.store = store
        self.key = key or record_key(server)
        self.clock = clock  # wall-clock seconds; a token's time left is measured on it
        # Set by the provider: the issuer of the authorization server in use right now.
        self.current_issuer: Callable[[], str | None] = lambda: None
        self._verified_issuer: str | None = None

    # --- the record ---------------------------------------------------------------------

    async def _load(self) -> dict[str, Any]:
        raw = await self.store.get_record(self.key)
        if not raw:
            return {}
        try:
            record = json.loads(raw)
        except ValueError:
            log.warning("server '%s': the stored sign-in is unreadable; sign in again", self.server)
            return {}
        if not isinstance(record, dict) or record.get("url") != self.url:
            return {}  # another URL: a new login
        return record

    async def _save(self, record: dict[str, Any]) -> None:
        record["url"] = self.url
        record["server"] = self.server
        await self.store.set_record(self.key, json.dumps(record))

    # --- TokenStorage -------------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        record = await self._load()
        data = record.get("tokens")
        if not isinstance(data, dict):
            return None
        tokens = OAuthToken.model_validate(data)
        obtained = record.get("obtained_at")
        if tokens.expires_in is not None and isinstance(obtained, (int, float)):
            # The SDK reads expires_in as "from now": hand it the time that is left.
            tokens.expires_in = int(obtained + tokens.expires_in - self.clock())
        if tokens.refresh_token:
            granted_by = record.get("issuer")
            if self._verified_issuer is None or granted_by != self._verified_issuer:
                tokens.refresh_token = None
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        record = await self._load()
        issuer = self.current_issuer() or self._verified_issuer
        record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        record["obtained_at"] = self.clock()
        record["issuer"] = issuer
        if issuer:
            self._verified_issuer = issuer
        await self._save(record)
        self.store.rejected.pop(self.key, None)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = (await self._load()).get("client")
        if not isinstance(data, dict):
            return None
        return OAuthClientInformationFull.model_validate(data)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        record = await self._load()
        record["client"] = client_info.model_dump(mode="json", exclude_none=True)
        await self._save(record)

    # --- Portico's additions ------------------------------------------------------------

    async def verify_issuer(self, issuer: str) -> bool:
        """Record the issuer discovered now. Returns False (and drops the stored refresh
        token) when it is not the issuer that granted the stored tokens."""
        record = await self._load()
        tokens = record.get("tokens")
        granted_by = record.get("issuer")
        self._verified_issuer = issuer
        if not isinstance(tokens, dict) or granted_by in (None, issuer):
            return True
        if tokens.pop("refresh_token", None) is not None:
            log.warning(
                "server '%s': the authorization server changed from %s to %s; the stored "
                "refresh token is dropped and the access token is used until it expires",
                self.server,
                granted_by,
                issuer,
            )
            await self._save(record)
        return False

    async def cached_discovery(self, max_age: float) -> dict[str, Any] | None:
        """The discovery kept with the tokens, when it is of the issuer that granted them
        and younger than ``max_age`` seconds."""
        record = await self._load()
        cached = record.get("discovered")
        if not isinstance(cached, dict) or cached.get("issuer") != record.get("issuer"):
            return None
        at = cached.get("at")
        if not isinstance(at, (int, float)) or not 0 <= self.clock() - at <= max_age:
            return None
        data = cached.get("data")
        return data if isinstance(data, dict) else None

    async def cache_discovery(self, issuer: str, data: dict[str, Any]) -> None:
        record = await self._load()
        if not record:
            return  # nothing signed in to keep it with
        record["discovered"] = {"issuer": issuer, "at": self.clock(), "data": data}
        await self._save(record)

    async def stored_issuer(self) -> str | None:
        value = (await self._load()).get("issuer")
        return value if isinstance(value, str) else None

    async def raw_tokens(self) -> OAuthToken | None:
        """The stored tokens as stored (refresh token included), for fingerprints."""
        data = (await self._load()).get("tokens")
        return OAuthToken.model_validate(data) if isinstance(data, dict) else None

    async def has_tokens(self) -> bool:
        return await self.raw_tokens() is not None

    async def wanted_scope(self) -> str | None:
        """The scopes a refused request (403 insufficient_scope) asked for, granted ones
        included: the next sign-in asks for them (SEP-2350's union)."""
        value = (await self._load()).get("wanted_scope")
        return value if isinstance(value, str) and value else None

    async def set_wanted_scope(self, scope: str | None) -> None:
        record = await self._load()
        if scope:
            record["wanted_scope"] = scope
        elif record.pop("wanted_scope", None) is None:
            return
        await self._save(record)

    async def mark_rejected(self) -> None:
        """The authorization server refused the stored grant (invalid_grant)."""
        print_ = fingerprint(await self.raw_tokens())
        if print_:
            self.store.rejected[self.key] = print_

    async def is_rejected(self) -> bool:
        stamp = self.store.rejected.get(self.key)
        return stamp is not None and stamp == fingerprint(await self.raw_tokens())

    async def clear_tokens(self) -> None:
        record = await self._load()
        if record.pop("tokens", None) is not None:
            record.pop("obtained_at", None)
            record.pop("issuer", None)
            await self._save(record)

    async def forget_client(self) -> None:
        record = await self._load()
        if record.pop("client", None) is not None:
            await self._save(record)

    async def clear(self) -> None:
        """Forget tokens and the client registration."""
        await self.store.delete_record(self.key)
        self.store.rejected.pop(self.key, None)


class StagedTokenStorage(PorticoTokenStorage):
    """A sign-in in progress over ``base``'s record.

    It reads the client registration from the real record but no tokens (so the flow
    really signs in), and keeps the new tokens to itself until :meth:`commit`. A
    cancelled, denied or failed sign-in therefore leaves the working tokens as they were.
    """

    def __init__(self, base: PorticoTokenStorage) -> None:
        super().__init__(base.server, base.url, base.store, key=base.key, clock=base.clock)
        self.current_issuer = base.current_issuer
        self._pending: dict[str, Any] | None = None

    async def get_tokens(self) -> OAuthToken | None:
        if self._pending is None:
            return None
        return OAuthToken.model_validate(self._pending["tokens"])

    async def set_tokens(self, tokens: OAuthToken) -> None:
        issuer = self.current_issuer() or self._verified_issuer
        self._pending = {
            "tokens": tokens.model_dump(mode="json", exclude_none=True),
            "obtained_at": self.clock(),
            "issuer": issuer,
        }
        if issuer:
            self._verified_issuer = issuer

    async def raw_tokens(self) -> OAuthToken | None:
        return await self.get_tokens()

    async def verify_issuer(self, issuer: str) -> bool:
        self._verified_issuer = issuer  # the stored record is not touched mid-sign-in
        return True

    async def clear_tokens(self) -> None:
        self._pending = None

    async def commit(self) -> bool:
        """Write the new tokens over the old ones; False when the sign-in got none."""
        if self._pending is None:
            return False
        record = await self._load()
        record.update(self._pending)
        await self._save(record)
        self.store.rejected.pop(self.key, None)
        return True
