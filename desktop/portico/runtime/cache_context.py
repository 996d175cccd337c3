"""The authorization context a private schema-cache entry is bound to.

2026-07-28 (server/utilities/caching): a ``cacheScope: "private"`` result "MAY be reused
for the same authorization context" and caches "MUST NOT be shared across authorization
contexts (e.g. a different access token requires a different cache)". The config digest
does not see that context: ``${keyring:NAME}`` stays the same text when the stored value
changes, and a sign-in lives in the token store. So a private entry carries a keyed hash
of what the connection presents: the resolved env / header values, the identity header's
profile, the client certificate (its files' bytes and password) and the stored sign-in's
stamp. Any change (another account, a refreshed token, a new API key) misses.

The hash is an HMAC under a random key kept in the state folder (0600), so the cache
folder alone never lets anybody test guesses of a secret against it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from portico.config.model import ServerSpec, Transport
from portico.paths import paths
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.transports.resolve import resolve_pairs, resolve_text

KEY_FILE = "cache-context.key"
_KEY_BYTES = 32


def _key(state_dir: Path) -> bytes:
    """The install's HMAC key, made on first use (blocking: call from a thread)."""
    path = state_dir / KEY_FILE
    try:
        key = path.read_bytes()
        if len(key) == _KEY_BYTES:
            return key
    except FileNotFoundError:
        pass
    state_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(_KEY_BYTES)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return key


def _file_digest(path: str | None) -> str:
    if not path:
        return ""
    try:
        return hashlib.sha256(Path(os.path.expanduser(path)).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


async def authorization_context(spec: ServerSpec, hooks: ConnectionHooks) -> str:
    """The keyed fingerprint of ``spec``'s credentials as a connect would present them.

    Raises what resolving raises (a missing secret is ``SecretProblem``): the caller then
    treats the private entry as unusable and connects, which reports the problem."""
    import asyncio

    lookup, environ = hooks.lookup_secret, hooks.environ
    parts: list[str] = [spec.name]
    if spec.transport is Transport.STDIO:
        pairs = await resolve_pairs(
            spec.env, lookup_keyring=lookup, environ=environ, where=f"{spec.name}.env"
        )
        parts += [f"env:{k}={v}" for k, v in sorted(pairs.items())]
    else:
        pairs = await resolve_pairs(
            spec.headers, lookup_keyring=lookup, environ=environ, where=f"{spec.name}.headers"
        )
        parts += [f"header:{k.lower()}={v}" for k, v in sorted(pairs.items())]
        if spec.identity_header is not None and spec.identity_header.value_from == "profile":
            profile = hooks.active_profile() if hooks.active_profile else "default"
            parts.append(f"profile:{profile}")
        cert = spec.client_cert
        if cert is not None:
            password = ""
            if cert.password:
                password = await resolve_text(
                    cert.password,
                    lookup_keyring=lookup,
                    environ=environ,
                    where=f"{spec.name}.client_cert.password",
                )
            files = await asyncio.to_thread(
                lambda: (_file_digest(cert.cert), _file_digest(cert.key))
            )
            parts += [f"cert:{files[0]}", f"key:{files[1]}", f"password:{password}"]
        if hooks.auth_stamp is not None:
            parts.append(f"sign-in:{await hooks.auth_stamp(spec) or ''}")
    key = await asyncio.to_thread(_key, paths().state_dir)
    return hmac.new(key, "\0".join(parts).encode(), hashlib.sha256).hexdigest()
