"""The auth tests sign in against real peers (tests/helpers/oauth.py) with an in-memory
keyring and a browser that never opens."""

from __future__ import annotations

import pytest

from tests.helpers.keyrings import MemoryKeyring, memory_keyring
from tests.helpers.oauth import no_real_browser, oidc, protected

__all__ = ["memory_keyring", "no_real_browser", "oidc", "protected"]


@pytest.fixture(autouse=True)
def _auth_defaults(memory_keyring: MemoryKeyring, no_real_browser: None) -> None:
    """Every auth test: never the real keyring, never a real browser tab."""
