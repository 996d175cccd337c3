"""Secrets and tokens: keyring, insecure backends, memory and 0600-file fallback, the two
namespaces, records keyed by server + URL. Every store is an object: no test clears
module state, and two stores never share what only lives in memory."""

from __future__ import annotations

import stat
from pathlib import Path

import keyring
import pytest
from keyring.backends import chainer, fail, null
from mcp.shared.auth import OAuthToken

from portico.auth.secret_store import SecretStore, SecretStoreError, secure_backend
from portico.auth.token_storage import PorticoTokenStorage
from tests.helpers.keyrings import MemoryKeyring
from tests.helpers.logs import AllowLogs


async def test_secure_backend_round_trip(memory_keyring: MemoryKeyring) -> None:
    store = SecretStore()
    assert secure_backend()
    assert store.insecure_notice() is None
    where = await store.store_secret("GITHUB_TOKEN", "ghp_value")
    assert where.startswith("the keyring (")
    assert memory_keyring.items[("portico", "GITHUB_TOKEN")] == "ghp_value"
    assert await store.lookup_secret("GITHUB_TOKEN") == "ghp_value"
    await store.delete_secret("GITHUB_TOKEN")
    assert await store.lookup_secret("GITHUB_TOKEN") is None
    await store.delete_secret("GITHUB_TOKEN")  # deleting twice is fine


async def test_user_names_never_reach_internal_records(memory_keyring: MemoryKeyring) -> None:
    """The token store's keys hold '/': the user-secret API refuses every such name."""
    store = SecretStore()
    storage = PorticoTokenStorage("prot", "https://a.example/mcp", store)
    await storage.set_tokens(OAuthToken(access_token="at-secret", refresh_token="rt-secret"))
    assert ("portico", "mcp-tokens/prot") in memory_keyring.items
    for name in ("mcp-tokens/prot", "mcp-tokens/../prot", "trust.json", "a/b", "", "x y"):
        if name == "trust.json":
            assert await store.lookup_secret(name) is None  # a plain name: just not there
            continue
        with pytest.raises(SecretStoreError, match="not a secret name"):
            await store.lookup_secret(name)
        with pytest.raises(SecretStoreError, match="not a secret name"):
            await store.store_secret(name, "overwrite")
    with pytest.raises(ValueError):
        await store.get_record("GITHUB_TOKEN")  # and the internal API is not a side door


class _PlaintextKeyring(MemoryKeyring):
    """Stands in for keyrings.alt's plaintext file backend (same module and class name)."""


_PlaintextKeyring.__module__ = "keyrings.alt.file"
_PlaintextKeyring.__name__ = "PlaintextKeyring"


def chain_of(*members: object) -> chainer.ChainerBackend:
    class _Chain(chainer.ChainerBackend):
        backends = tuple(members)  # type: ignore[assignment]

    _Chain.__module__ = chainer.__name__
    return _Chain()


@pytest.mark.parametrize(
    "backend",
    [
        fail.Keyring(),
        null.Keyring(),
        _PlaintextKeyring(),
        chain_of(null.Keyring(), fail.Keyring()),
    ],
    ids=["fail", "null", "plaintext", "empty-chain"],
)
async def test_insecure_backends_refuse_user_secrets_and_keep_sign_ins_in_memory(
    backend: object, portico_home: Path, allow_logs: object
) -> None:
    allow_logs(r"No secure keyring")  # type: ignore[operator]
    keyring.set_keyring(backend)  # type: ignore[arg-type]
    store = SecretStore()
    assert not secure_backend()
    assert store.storage_kind() == "memory"
    notice = store.insecure_notice()
    assert notice is not None and "memory" in notice and "file_fallback" in notice

    with pytest.raises(SecretStoreError) as caught:
        await store.store_secret("API_KEY", "v1")
    message = str(caught.value)
    assert "no secure keyring" in message and "secrets: {file_fallback: true}" in message
    assert await store.lookup_secret("API_KEY") is None  # nothing was kept anywhere

    tokens = PorticoTokenStorage("svc", "https://a.example/mcp", store)
    await tokens.set_tokens(OAuthToken(access_token="at"))
    assert await tokens.has_tokens()  # a sign-in lives on in this process's memory
    other = PorticoTokenStorage("svc", "https://a.example/mcp", SecretStore())
    assert not await other.has_tokens()  # but never in another store's
    if isinstance(backend, MemoryKeyring):
        assert backend.items == {}  # never written to the plaintext store
    assert not (portico_home / "state").exists()  # and not to disk


async def test_chain_with_a_secure_member_is_secure(memory_keyring: MemoryKeyring) -> None:
    keyring.set_keyring(chain_of(null.Keyring(), memory_keyring))
    assert secure_backend()


async def test_file_fallback_writes_0600_files(portico_home: Path, allow_logs: object) -> None:
    allow_logs(r"No secure keyring")  # type: ignore[operator]
    keyring.set_keyring(fail.Keyring())
    store = SecretStore(file_fallback=True)
    assert store.storage_kind() == "file"
    storage = PorticoTokenStorage("linear", "https://mcp.linear.app/mcp", store)
    await storage.set_tokens(OAuthToken(access_token="at-1", refresh_token="rt-1"))
    path = portico_home / "state" / "mcp-tokens" / "linear.json"
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (await storage.raw_tokens()).access_token == "at-1"  # type: ignore[union-attr]
    await storage.clear()
    assert not path.exists()

    where = await store.store_secret("API_KEY", "v1")
    secret_file = portico_home / "state" / "secrets" / "API_KEY.json"
    assert str(secret_file) in where and "0600" in where
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert await SecretStore(file_fallback=True).lookup_secret("API_KEY") == "v1"  # persists


async def test_token_record_is_keyed_by_url() -> None:
    store = SecretStore()
    first = PorticoTokenStorage("svc", "https://a.example/mcp", store)
    await first.set_tokens(OAuthToken(access_token="at", refresh_token="rt", expires_in=3600))
    assert await first.has_tokens()
    moved = PorticoTokenStorage("svc", "https://b.example/mcp", store)
    assert await moved.get_tokens() is None  # a changed URL is a new login
    assert await moved.get_client_info() is None


async def test_refresh_token_bound_to_its_issuer(allow_logs: AllowLogs) -> None:
    allow_logs(r"the authorization server changed from .* the stored refresh token is dropped")
    storage = PorticoTokenStorage("svc", "https://a.example/mcp", SecretStore())
    storage.current_issuer = lambda: "https://as-1.example"
    await storage.set_tokens(OAuthToken(access_token="at", refresh_token="rt", expires_in=60))

    later = PorticoTokenStorage("svc", "https://a.example/mcp", SecretStore())  # a new process
    tokens = await later.get_tokens()
    assert tokens is not None and tokens.refresh_token is None  # issuer not seen yet
    assert await later.verify_issuer("https://as-1.example")
    tokens = await later.get_tokens()
    assert tokens is not None and tokens.refresh_token == "rt"
    assert 0 < (tokens.expires_in or 0) <= 60  # the time left, not the original lifetime

    assert not await later.verify_issuer("https://as-2.example")
    kept = await later.raw_tokens()
    assert kept is not None and kept.access_token == "at" and kept.refresh_token is None


async def test_rejected_grant_until_tokens_change() -> None:
    store = SecretStore()
    storage = PorticoTokenStorage("svc", "https://a.example/mcp", store)
    await storage.set_tokens(OAuthToken(access_token="at", refresh_token="rt"))
    await storage.mark_rejected()
    assert await storage.is_rejected()
    fresh = PorticoTokenStorage("svc", "https://a.example/mcp", SecretStore())
    assert not await fresh.is_rejected()  # another process's store has its own list
    await storage.set_tokens(OAuthToken(access_token="at2", refresh_token="rt2"))
    assert not await storage.is_rejected()


async def test_locked_keyring_names_secret_and_backend() -> None:
    from portico.auth.secret_store import SecretStoreError
    from tests.helpers.keyrings import LockedKeyring

    store = SecretStore()
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        for call in (
            store.store_secret("TOKEN", "v"),
            store.lookup_secret("TOKEN"),
            store.delete_secret("TOKEN"),
        ):
            with pytest.raises(SecretStoreError) as caught:
                await call
            message = str(caught.value)
            assert "'TOKEN'" in message and "LockedKeyring" in message
            assert "unlock your keyring" in message
    finally:
        keyring.set_keyring(previous)
