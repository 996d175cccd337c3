"""Secrets in the OS keyring, as one :class:`SecretStore` object per process.

``portico.services.build_services`` creates the store and hands it to everything that
reads or writes secrets (the OAuth token storage, the runtime's ``${keyring:NAME}``
lookups, ``portico secret``, the editor's Store in keychain). Nothing about secrets lives
in module state.

Two namespaces that never meet:

- **user secrets**: what ``${keyring:NAME}`` reads and ``portico secret set NAME`` writes.
  Names are ``[A-Za-z0-9_.-]+`` (no ``/``), checked on every call.
- **internal records**: OAuth tokens and client registrations (``mcp-tokens/<server>``),
  the local endpoint's client tokens (``gateway-clients/<client>``). Their keys always
  contain ``/``, so no user-secret name can reach them, and the user API refuses such
  names outright.

Every keyring call runs in a worker thread (``asyncio.to_thread``): some backends talk to
D-Bus or prompt for an unlock and would otherwise block the loop.

Without a secure backend (``fail``, ``null``, the plaintext file of ``keyrings.alt``, or a
chain with no secure member):

- with ``secrets.file_fallback: true`` everything goes to files under the state dir with
  mode 0600 (and the person is told so);
- otherwise sign-ins (internal records) stay in this process's memory with a warning, and
  storing a user secret is refused with the reason and the one-line fix: a value that is
  gone after a restart is worse than a clear "no".
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from pathlib import Path
from typing import Any, Literal

from portico.paths import paths

log = logging.getLogger(__name__)

SERVICE = "portico"
TOKEN_PREFIX = "mcp-tokens/"
CLIENT_PREFIX = "gateway-clients/"  # the local endpoint's per-client bearer tokens
_INTERNAL_PREFIXES = (TOKEN_PREFIX, CLIENT_PREFIX)
USER_NAME = re.compile(r"[A-Za-z0-9_.-]+")

StorageKind = Literal["keyring", "file", "memory"]

FALLBACK_FIX = "add `secrets: {file_fallback: true}` to config.yaml to keep them in 0600 files"

INSECURE_TEXT = (
    "No secure keyring is available on this machine, so sign-ins are kept in memory only "
    f"until Portico quits and secrets cannot be stored. To keep them, {FALLBACK_FIX}."
)


class SecretStoreError(Exception):
    """The store refused (locked, unavailable, no secure keyring, bad name); the message
    names the secret, the backend and what to do."""


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


def valid_user_name(name: str) -> bool:
    return bool(USER_NAME.fullmatch(name))


def _bad_name(name: str) -> SecretStoreError:
    return SecretStoreError(
        f"{name!r} is not a secret name: use letters, digits, '_', '.' and '-' only "
        "(no '/'); for example GITHUB_TOKEN"
    )


_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


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


class SecretStore:
    """Where this process keeps secrets. One per process, made by ``build_services``."""

    def __init__(self, *, file_fallback: bool = False, state_dir: Path | None = None) -> None:
        self.file_fallback = file_fallback
        self._state_dir = state_dir
        self._memory: dict[str, str] = {}
        self._warned = False
        # Fingerprints of refresh tokens an authorization server rejected, per record key:
        # background work does not try them again until the stored tokens change.
        self.rejected: dict[str, str] = {}

    def configure(self, *, file_fallback: bool) -> None:
        """Apply ``secrets.file_fallback`` (``Config.settings.file_fallback_for_secrets``)."""
        self.file_fallback = file_fallback

    @property
    def state_dir(self) -> Path:
        return self._state_dir or paths().state_dir

    # --- where secrets go ---------------------------------------------------------------

    def storage_kind(self) -> StorageKind:
        """``keyring``, ``file`` or ``memory``: where secrets go right now."""
        if secure_backend():
            return "keyring"
        return "file" if self.file_fallback else "memory"

    def insecure_notice(self) -> str | None:
        """The sentence to show the person when secrets are not stored securely, else None."""
        kind = self.storage_kind()
        if kind == "memory":
            return INSECURE_TEXT
        if kind == "file":
            return (
                "No secure keyring is available; secrets are stored in files readable only "
                f"by you under {self.state_dir} (secrets.file_fallback is on)."
            )
        return None

    def where(self, name: str) -> str:
        """Where ``name`` is (or would be) stored, for "Stored X in ..." messages."""
        kind = self.storage_kind()
        if kind == "keyring":
            return f"the keyring ({backend_name()})"
        if kind == "file":
            return f"{self._file_for(name)} (mode 0600; no secure keyring here)"
        return "memory only (gone when Portico quits)"

    # --- user secrets (${keyring:NAME}) -------------------------------------------------

    async def lookup_secret(self, name: str) -> str | None:
        """The user secret ``name`` (a ``${keyring:NAME}`` reference), or None.

        Names outside ``[A-Za-z0-9_.-]`` are refused: nothing else is reachable from here.
        """
        if not valid_user_name(name):
            raise _bad_name(name)
        return await asyncio.to_thread(self._get_sync, name)

    async def store_secret(self, name: str, value: str) -> str:
        """Store a user secret; returns where it went. Refuses when it would not persist."""
        if not valid_user_name(name):
            raise _bad_name(name)
        return await asyncio.to_thread(self._store_sync, name, value)

    def _store_sync(self, name: str, value: str) -> str:
        if self.storage_kind() == "memory":
            raise SecretStoreError(
                f"cannot store secret {name!r}: no secure keyring is available on this "
                f"machine ({backend_name()}), so it would be lost when Portico quits. To keep "
                f"secrets in files readable only by you, {FALLBACK_FIX}."
            )
        self._set_sync(name, value)
        return self.where(name)

    async def delete_secret(self, name: str) -> None:
        if not valid_user_name(name):
            raise _bad_name(name)
        await asyncio.to_thread(self._delete_sync, name)

    # --- internal records (tokens, client registrations) --------------------------------

    async def get_record(self, key: str) -> str | None:
        self._internal(key)
        return await asyncio.to_thread(self._get_sync, key)

    async def set_record(self, key: str, value: str) -> None:
        self._internal(key)
        await asyncio.to_thread(self._set_sync, key, value)

    async def delete_record(self, key: str) -> None:
        self._internal(key)
        await asyncio.to_thread(self._delete_sync, key)

    @staticmethod
    def _internal(key: str) -> None:
        if not key.startswith(_INTERNAL_PREFIXES):
            raise ValueError(f"not an internal record key: {key!r}")

    # --- the backends -------------------------------------------------------------------

    def _warn_once(self) -> None:
        notice = self.insecure_notice()
        if notice and not self._warned:
            self._warned = True
            log.warning("%s (keyring backend: %s)", notice, backend_name())

    def _file_for(self, name: str) -> Path:
        if name.startswith(TOKEN_PREFIX):
            safe = _SAFE.sub("_", name[len(TOKEN_PREFIX) :])
            return self.state_dir / "mcp-tokens" / f"{safe}.json"
        if name.startswith(CLIENT_PREFIX):
            safe = _SAFE.sub("_", name[len(CLIENT_PREFIX) :])
            return self.state_dir / "gateway-clients" / f"{safe}.json"
        return self.state_dir / "secrets" / f"{_SAFE.sub('_', name)}.json"

    def _file_get(self, name: str) -> str | None:
        path = self._file_for(name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("could not read the secret file %s: %s", path, type(exc).__name__)
            return None
        value = data.get("value") if isinstance(data, dict) else None
        return value if isinstance(value, str) else None

    def _file_set(self, name: str, value: str) -> None:
        path = self._file_for(name)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"name": name, "value": value}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)

    def _get_sync(self, name: str) -> str | None:
        if secure_backend():
            import keyring
            from keyring.errors import KeyringError

            try:
                return keyring.get_password(SERVICE, name)
            except KeyringError as exc:
                raise _keyring_failure("read", name, exc) from exc
        self._warn_once()
        if self.file_fallback:
            return self._file_get(name)
        return self._memory.get(name)

    def _set_sync(self, name: str, value: str) -> None:
        if secure_backend():
            import keyring
            from keyring.errors import KeyringError

            try:
                keyring.set_password(SERVICE, name, value)
            except KeyringError as exc:
                raise _keyring_failure("store", name, exc) from exc
            return
        self._warn_once()
        if self.file_fallback:
            self._file_set(name, value)
        else:
            self._memory[name] = value

    def _delete_sync(self, name: str) -> None:
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
        if self.file_fallback:
            self._file_for(name).unlink(missing_ok=True)
        self._memory.pop(name, None)
