"""A keyring backend whose reads fail with an error nobody expects (for crash handling)."""

from __future__ import annotations

from tests.memory_keyring import MemoryKeyring


class ExplodingKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the secret service fell over")
