"""CLI tests run ``portico`` in-process or as a subprocess; the sign-in ones need the real
OAuth peers (tests/helpers/oauth.py)."""

from __future__ import annotations

from tests.helpers.oauth import oidc, protected

__all__ = ["oidc", "protected"]
