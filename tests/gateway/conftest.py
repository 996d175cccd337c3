"""The endpoint's tests keep client tokens in an in-memory keyring that counts as secure."""

from __future__ import annotations

from tests.helpers.keyrings import memory_keyring

__all__ = ["memory_keyring"]
