"""Secrets (``${keyring:NAME}`` values, OAuth tokens) in the OS keyring.

Every keyring call runs in a worker thread (``asyncio.to_thread``): some backends talk to
D-Bus or prompt for an unlock and would otherwise block the loop.

Without a secure backend (``fail``, ``null``, the plaintext file of ``keyrings.alt``, or a
chain with no secure member) secrets stay in this process's memory and the person is told
so once (``insecure_notice()``), unless ``secrets.file_fallback: true`` was set: then they
go to files under the state dir with mode 0600.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from portico.paths import paths

log = logging.getLogger(__name__)

SERVICE = "portico"
TOKEN_PREFIX = "mcp-tokens/"

_memory: dict[str, str] = {}
_file_fallback = False
_warned = False

INSECURE_TEXT = (
    "No secure keyring is available on this machine, so sign-ins and secrets are kept in "
    "memory only until Portico quits. To keep them in files readable only by you, add "
    "`secrets: {file_fallback: true}` to config.yaml."
)


def configure(*, file_fallback: bool) -> None:
    """Apply ``secrets.file_fallback`` (from ``Config.settings.file_fallback_for_secrets``)."""
    global _file_fallback
    _file_fallback = file_fallback


def _backend() -> Any:
    import keyring

    return keyring.get_keyring()


def _is_insecure(backend: Any) -> bool:
    module = type(backend).__module__
    name = type(backend).__name__
    if module.startswith("keyring.backends.fail") or module.startswith("keyring.backends.null"):
        return True
    if module.startswith("keyrings.alt") and "plaintext" in name.lower():
        return True
    if module.startswith("keyring.backends.chainer"):
        members = list(getattr(backend, "backends", []) or [])
        return not any(not _is_insecure(member) for member in members)
    return False


def secure_backend() -> bool:
    """True when the active keyring backend keeps secrets safely."""
    try:
        return not _is_insecure(_backend())
    except Exception:  # a broken keyring install is as good as none
        log.warning("the keyring backend could not be loaded", exc_info=True)
        return False


def backend_name() -> str:
    try:
        backend = _backend()
    except Exception:
        return "unavailable"
    return f"{type(backend).__module__}.{type(backend).__name__}"


def storage_kind() -> str:
    """``keyring``, ``file`` or ``memory``: where secrets go right now."""
    if secure_backend():
        return "keyring"
    return "file" if _file_fallback else "memory"


def insecure_notice() -> str | None:
    """The sentence to show the person when secrets are not stored securely, else None."""
    kind = storage_kind()
    if kind == "memory":
        return INSECURE_TEXT
    if kind == "file":
        return (
            "No secure keyring is available; secrets are stored in files readable only by "
            f"you under {paths().state_dir} (secrets.file_fallback is on)."
        )
    return None


def _warn_once() -> None:
    global _warned
    notice = insecure_notice()
    if notice and not _warned:
        _warned = True
        log.warning("%s (keyring backend: %s)", notice, backend_name())


_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _file_for(name: str) -> Path:
    state = paths().state_dir
    if name.startswith(TOKEN_PREFIX):
        return state / "mcp-tokens" / f"{_SAFE.sub('_', name[len(TOKEN_PREFIX) :])}.json"
    return state / "secrets" / f"{_SAFE.sub('_', name)}.json"


def _file_get(name: str) -> str | None:
    path = _file_for(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("could not read the secret file %s: %s", path, type(exc).__name__)
        return None
    value = data.get("value") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _file_set(name: str, value: str) -> None:
    path = _file_for(name)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"name": name, "value": value}, handle)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _file_delete(name: str) -> None:
    _file_for(name).unlink(missing_ok=True)


class SecretStoreError(Exception):
    """The keyring refused (locked, unavailable, write failed); the message names the
    secret, the backend and what to do."""


def _keyring_failure(action: str, name: str, exc: Exception) -> SecretStoreError:
    from keyring.errors import KeyringLocked

    detail = str(exc) or type(exc).__name__
    if isinstance(exc, KeyringLocked):
        todo = "unlock your keyring (log in to the desktop session) and try again"
    else:
        todo = (
            "check that the keyring service is running and unlocked, or set "
            "secrets.file_fallback: true in config.yaml to keep secrets in 0600 files"
        )
    return SecretStoreError(
        f"cannot {action} secret {name!r} in the keyring ({backend_name()}): {detail}; {todo}"
    )


def _get_sync(name: str) -> str | None:
    if secure_backend():
        import keyring
        from keyring.errors import KeyringError

        try:
            return keyring.get_password(SERVICE, name)
        except KeyringError as exc:
            raise _keyring_failure("read", name, exc) from exc
    _warn_once()
    if _file_fallback:
        return _file_get(name)
    return _memory.get(name)


def _set_sync(name: str, value: str) -> None:
    if secure_backend():
        import keyring
        from keyring.errors import KeyringError

        try:
            keyring.set_password(SERVICE, name, value)
        except KeyringError as exc:
            raise _keyring_failure("store", name, exc) from exc
        return
    _warn_once()
    if _file_fallback:
        _file_set(name, value)
    else:
        _memory[name] = value


def _delete_sync(name: str) -> None:
    if secure_backend():
        import keyring
        from keyring.errors import KeyringError, PasswordDeleteError

        try:
            keyring.delete_password(SERVICE, name)
        except PasswordDeleteError:
            pass  # nothing stored under that name
        except KeyringError as exc:
            raise _keyring_failure("delete", name, exc) from exc
        return
    if _file_fallback:
        _file_delete(name)
    _memory.pop(name, None)


async def lookup_secret(name: str) -> str | None:
    """The secret stored under ``name`` (a ``${keyring:NAME}`` reference), or None."""
    return await asyncio.to_thread(_get_sync, name)


async def set_secret(name: str, value: str) -> None:
    await asyncio.to_thread(_set_sync, name, value)


async def delete_secret(name: str) -> None:
    await asyncio.to_thread(_delete_sync, name)
