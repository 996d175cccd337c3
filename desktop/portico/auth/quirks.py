"""Provider quirks, each one observed in the wild.

The SDK's ``OAuthClientProvider`` already does RFC 9207 ``iss`` checks and the RFC 8414
§3.3 issuer check strictly. These helpers add the few exceptions real providers need and
the parameters some of them want; ``portico.auth.provider`` applies them at the narrowest
point (the callback result, the authorize URL, the metadata issuer check).
"""

from __future__ import annotations

import contextvars
import logging
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

log = logging.getLogger(__name__)

FIGMA_HOST = "mcp.figma.com"
FIGMA_CLIENT_NAME = "Claude Code"  # Figma allowlists registrations by exact client_name
FIGMA_ISSUER = "https://api.figma.com"
GOOGLE_HOST = "accounts.google.com"
DEFAULT_CLIENT_NAME = "Portico"


class IssuerError(Exception):
    """An authorization response or metadata document names the wrong issuer."""


def client_name_for(server_url: str, configured: str | None) -> str:
    """``oauth.client_name`` if set; "Claude Code" for mcp.figma.com; else "Portico"."""
    if configured:
        return configured
    host = (urlparse(server_url).hostname or "").lower()
    if host == FIGMA_HOST:
        return FIGMA_CLIENT_NAME
    return DEFAULT_CLIENT_NAME


def _strip_slash(url: str) -> str:
    return url[:-1] if url.endswith("/") and urlparse(url).path == "/" else url


def resolve_response_iss(
    iss: str | None, issuer: str | None, iss_supported: bool, *, server: str = ""
) -> str | None:
    """The ``iss`` to hand to the SDK's RFC 9207 check, or raise ``IssuerError``.

    A present ``iss`` must equal the discovered issuer exactly (every server). A missing
    one is rejected when the server advertises ``authorization_response_iss_parameter_
    supported``, except for Figma's issuer, whose missing ``iss`` is filled in.
    """
    if iss is not None:
        if issuer is not None and iss != issuer:
            raise IssuerError(
                f"Authorization response iss mismatch for server '{server}': the redirect "
                f"names {iss}, but the authorization server is {issuer}"
            )
        return iss
    if issuer is not None and iss_supported:
        if _strip_slash(issuer) == FIGMA_ISSUER:
            log.warning(
                "server '%s': the authorization response from %s has no iss parameter although "
                "its metadata advertises one; accepting it as %s (known provider quirk)",
                server,
                FIGMA_ISSUER,
                issuer,
            )
            return issuer
        raise IssuerError(
            f"Authorization response for server '{server}' is missing the iss parameter that "
            f"{issuer} advertises (RFC 9207)"
        )
    return None


def metadata_issuer_ok(issuer: str, expected: str, fetched_from: str | None) -> bool:
    """RFC 8414 §3.3 with one exception: a server advertised as ``https://host/path``
    whose metadata, fetched from ``https://host/.well-known/oauth-authorization-server/path``,
    names the origin ``https://host``. Everything else must match exactly (a root issuer
    with or without its trailing slash counts as the same)."""
    if issuer == expected or _strip_slash(issuer) == _strip_slash(expected):
        return True
    exp = urlparse(expected)
    if not exp.path or exp.path == "/" or fetched_from is None:
        return False
    origin = f"{exp.scheme}://{exp.netloc}"
    if _strip_slash(issuer) != origin:
        return False
    path_aware = f"{origin}/.well-known/oauth-authorization-server{exp.path.rstrip('/')}"
    return fetched_from == path_aware


# The URL the metadata document being validated right now was fetched from; set by the
# provider around each step of the SDK's flow (see portico.auth.provider).
metadata_fetch_url: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "portico_metadata_fetch_url", default=None
)


def authorize_url_extras(authorize_url: str, issuer: str | None) -> str:
    """Add the parameters some providers need to the authorize URL.

    Google issues refresh tokens only with ``access_type=offline`` and, for a returning
    user, only with ``prompt=consent``. Other issuers' URLs are returned untouched.
    """
    host = (urlparse(issuer or "").hostname or "").lower()
    if host != GOOGLE_HOST:
        host = (urlparse(authorize_url).hostname or "").lower()
        if host != GOOGLE_HOST:
            return authorize_url
    parts = urlparse(authorize_url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "prompt"]
    query = [(k, v) for k, v in query if k != "access_type"]
    query += [("access_type", "offline"), ("prompt", "consent")]
    return urlunparse(parts._replace(query=urlencode(query)))
