"""Resolve ``${env:NAME}`` / ``${keyring:NAME}`` references at connect time.

Uses ``portico.config.secrets.resolve`` when the config package provides it; until then
(and as its documented behaviour) a small local resolver does the same job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping

from portico.runtime.errors import ConfigProblem

_REF = re.compile(r"\$\{(env|keyring):([^}]+)\}")

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
    lookup = lookup_keyring or _no_keyring
    try:
        from portico.config import secrets  # H1's module, when present
    except ImportError:
        secrets = None  # type: ignore[assignment]
    if secrets is not None and hasattr(secrets, "resolve"):
        try:
            return await secrets.resolve(text, lookup_keyring=lookup, environ=env, where=where)
        except Exception as exc:  # SecretError and friends: keep their wording
            raise ConfigProblem(str(exc)) from exc
    if "${" not in text:
        return text
    out: list[str] = []
    last = 0
    for match in _REF.finditer(text):
        out.append(text[last : match.start()])
        kind, name = match.group(1), match.group(2).strip()
        if kind == "env":
            value = env.get(name)
            if value is None:
                raise ConfigProblem(
                    f"{where}: environment variable {name} is not set; set it before starting"
                    " Portico or write the value into the config"
                )
        else:
            value = await lookup(name)
            if value is None:
                raise ConfigProblem(
                    f"{where}: secret {name!r} is not in the keyring;"
                    f" run `portico secret set {name}`"
                )
        out.append(value)
        last = match.end()
    out.append(text[last:])
    return "".join(out)


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
