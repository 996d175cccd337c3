"""Keyring test doubles: an in-memory backend that counts as secure (tests never touch the
real keyring), a locked one, and one that fails in a way nobody expects.

Priority -1 on purpose: docs/platform-notes.md, "keyring".
"""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    # Below the fail backend's 0: keyring discovers every KeyringBackend subclass, and a
    # positive priority would make these test doubles the process's default keyring (or
    # members of its chain) for every later test. Tests install one with set_keyring.
    priority = -1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.items.pop((service, username), None)


class LockedKeyring(MemoryKeyring):
    """A keyring whose collection is locked: every access raises KeyringLocked."""

    def get_password(self, service: str, username: str) -> str | None:
        from keyring.errors import KeyringLocked

        raise KeyringLocked("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        from keyring.errors import KeyringLocked

        raise KeyringLocked("the collection is locked")

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import KeyringLocked

        raise KeyringLocked("the collection is locked")


class ExplodingKeyring(MemoryKeyring):
    """Reads fail with an error nobody expects (for crash handling)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the secret service fell over")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """The in-memory backend as the process's keyring for one test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
