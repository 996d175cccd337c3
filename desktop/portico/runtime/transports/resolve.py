"""Resolve ``${env:NAME}`` / ``${keyring:NAME}`` references at connect time, as the
runtime's SecretProblem (``portico.config.secrets`` does the resolving)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping

from portico.config import secrets
from portico.runtime.errors import SecretProblem

KeyringLookup = Callable[[str], Awaitable[str | None]]


async def _no_keyring(_name: str) -> str | None:
    return None


async def resolve_text(
    text: str,
    *,
    lookup_keyring: KeyringLookup | None,
    environ: Mapping[str, str] | None,
    where: str,
) -> str:
    """``text`` with every reference replaced; raises ConfigProblem naming ``where``."""
    env = os.environ if environ is None else environ
    try:
        return await secrets.resolve(
            text, lookup_keyring=lookup_keyring or _no_keyring, environ=env, where=where
        )
    except secrets.SecretError as exc:
        raise SecretProblem(str(exc)) from exc


async def resolve_pairs(
    pairs: tuple[tuple[str, str], ...],
    *,
    lookup_keyring: KeyringLookup | None,
    environ: Mapping[str, str] | None,
    where: str,
) -> dict[str, str]:
    resolved: dict[str, str] = {}
    for key, value in pairs:
        resolved[key] = await resolve_text(
            value, lookup_keyring=lookup_keyring, environ=environ, where=f"{where}.{key}"
        )
    return resolved
