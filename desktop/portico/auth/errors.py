"""Errors of the sign-in code. ``NeedsAuth`` itself belongs to ``portico.runtime.errors``."""

from __future__ import annotations


class AuthError(Exception):
    """A sign-in failed; the message says what to do next (never contains a secret)."""


class NeedsOwnClient(AuthError):
    """The server refused to register Portico; the person must register a client."""


def own_client_message(server: str, detail: str = "") -> str:
    extra = f" ({detail})" if detail else ""
    return (
        f"Server '{server}' did not let Portico register itself as an OAuth client{extra}, so "
        "no token was stored. Register an OAuth app in the provider's console (redirect URI "
        "as shown by `portico mcp login`) and set oauth.client_id and oauth.client_secret on "
        "the server (`oauth = { client_id = ..., client_secret = ... }` in mcp.toml, or "
        "`oauth: {client_id: ..., client_secret: ...}` in config.yaml; keep the secret in the "
        "keyring with `portico secret set NAME` and write ${keyring:NAME})."
    )
