"""Secrets and tokens: keyring, insecure backends, memory and 0600-file fallback,
records keyed by server + URL."""

from __future__ import annotations

import stat
from pathlib import Path

import keyring
import pytest
from keyring.backends import chainer, fail, null
from mcp.shared.auth import OAuthToken

from portico.auth import secret_store
from portico.auth.token_storage import PorticoTokenStorage
from tests.auth.conftest import MemoryKeyring
from tests.helpers.logs import AllowLogs


async def test_secure_backend_round_trip(memory_keyring: MemoryKeyring) -> None:
    assert secret_store.secure_backend()
    assert secret_store.insecure_notice() is None
    await secret_store.set_secret("GITHUB_TOKEN", "ghp_value")
    assert memory_keyring.items[("portico", "GITHUB_TOKEN")] == "ghp_value"
    assert await secret_store.lookup_secret("GITHUB_TOKEN") == "ghp_value"
    await secret_store.delete_secret("GITHUB_TOKEN")
    assert await secret_store.lookup_secret("GITHUB_TOKEN") is None
    await secret_store.delete_secret("GITHUB_TOKEN")  # deleting twice is fine


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
async def test_insecure_backends_keep_secrets_in_memory(
    backend: object, portico_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keyring.set_keyring(backend)  # type: ignore[arg-type]
    assert not secret_store.secure_backend()
    assert secret_store.storage_kind() == "memory"
    notice = secret_store.insecure_notice()
    assert notice is not None and "memory" in notice and "file_fallback" in notice

    await secret_store.set_secret("API_KEY", "v1")
    assert await secret_store.lookup_secret("API_KEY") == "v1"
    if isinstance(backend, MemoryKeyring):
        assert backend.items == {}  # never written to the plaintext store
    assert not (portico_home / "state").exists()  # and not to disk


async def test_chain_with_a_secure_member_is_secure(memory_keyring: MemoryKeyring) -> None:
    keyring.set_keyring(chain_of(null.Keyring(), memory_keyring))
    assert secret_store.secure_backend()


async def test_file_fallback_writes_0600_files(portico_home: Path) -> None:
    keyring.set_keyring(fail.Keyring())
    secret_store.configure(file_fallback=True)
    try:
        assert secret_store.storage_kind() == "file"
        storage = PorticoTokenStorage("linear", "https://mcp.linear.app/mcp")
        await storage.set_tokens(OAuthToken(access_token="at-1", refresh_token="rt-1"))
        path = portico_home / "state" / "mcp-tokens" / "linear.json"
        assert path.exists()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert (await storage.raw_tokens()).access_token == "at-1"  # type: ignore[union-attr]
        await storage.clear()
        assert not path.exists()
    finally:
        secret_store.configure(file_fallback=False)


async def test_token_record_is_keyed_by_url() -> None:
    first = PorticoTokenStorage("svc", "https://a.example/mcp")
    await first.set_tokens(OAuthToken(access_token="at", refresh_token="rt", expires_in=3600))
    assert await first.has_tokens()
    moved = PorticoTokenStorage("svc", "https://b.example/mcp")
    assert await moved.get_tokens() is None  # a changed URL is a new login
    assert await moved.get_client_info() is None


async def test_refresh_token_bound_to_its_issuer(allow_logs: AllowLogs) -> None:
    allow_logs(r"the authorization server changed from .* the stored refresh token is dropped")
    storage = PorticoTokenStorage("svc", "https://a.example/mcp")
    storage.current_issuer = lambda: "https://as-1.example"
    await storage.set_tokens(OAuthToken(access_token="at", refresh_token="rt", expires_in=60))

    later = PorticoTokenStorage("svc", "https://a.example/mcp")  # a new process
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
    storage = PorticoTokenStorage("svc", "https://a.example/mcp")
    await storage.set_tokens(OAuthToken(access_token="at", refresh_token="rt"))
    await storage.mark_rejected()
    assert await storage.is_rejected()
    await storage.set_tokens(OAuthToken(access_token="at2", refresh_token="rt2"))
    assert not await storage.is_rejected()


async def test_locked_keyring_names_secret_and_backend() -> None:
    from portico.auth.secret_store import SecretStoreError
    from tests.memory_keyring import LockedKeyring

    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        for call in (
            secret_store.set_secret("TOKEN", "v"),
            secret_store.lookup_secret("TOKEN"),
            secret_store.delete_secret("TOKEN"),
        ):
            with pytest.raises(SecretStoreError) as caught:
                await call
            message = str(caught.value)
            assert "'TOKEN'" in message and "LockedKeyring" in message
            assert "unlock your keyring" in message
    finally:
        keyring.set_keyring(previous)
