"""Provider quirks: Figma's client name and missing iss, the Strava-style issuer
exception, Google's parameters, oauth.scope; and the SDK hook that applies them."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlparse

import pytest
from mcp.client.auth import OAuthFlowError
from mcp.client.auth import oauth2 as sdk_oauth2
from mcp.shared.auth import OAuthMetadata

from portico.auth import provider as _provider  # noqa: F401  (installs the SDK hook)
from portico.auth import quirks
from tests.helpers.logs import AllowLogs

pytestmark = pytest.mark.slow  # talks to real servers or processes


def test_figma_gets_its_allowlisted_client_name() -> None:
    assert quirks.client_name_for("https://mcp.figma.com/mcp", None) == "Claude Code"
    assert quirks.client_name_for("https://MCP.Figma.com/mcp", None) == "Claude Code"
    assert quirks.client_name_for("https://mcp.figma.com/mcp", "Mine") == "Mine"
    assert quirks.client_name_for("https://mcp.example.com/mcp", None) == "Portico"


def test_iss_rules(caplog: pytest.LogCaptureFixture, allow_logs: AllowLogs) -> None:
    allow_logs(r"has no iss parameter although its metadata advertises one")
    resolve = quirks.resolve_response_iss
    # present and equal: fine; present and different: refused for every server
    assert resolve("https://as.example", "https://as.example", True) == "https://as.example"
    with pytest.raises(quirks.IssuerError, match="iss mismatch"):
        resolve("https://evil.example", "https://as.example", False)
    with pytest.raises(quirks.IssuerError, match="iss mismatch"):
        resolve("https://other.figma.com", "https://api.figma.com", True)
    # missing: refused when advertised, fine when not
    with pytest.raises(quirks.IssuerError, match="missing the iss"):
        resolve(None, "https://as.example", True, server="x")
    assert resolve(None, "https://as.example", False) is None
    # Figma's issuer advertises iss but omits it: filled in, with a warning
    with caplog.at_level(logging.WARNING, logger="portico.auth.quirks"):
        assert resolve(None, "https://api.figma.com", True, server="figma") == (
            "https://api.figma.com"
        )
    assert any("api.figma.com" in r.getMessage() for r in caplog.records)
    assert resolve(None, "https://api.figma.com/", True) == "https://api.figma.com/"


def test_metadata_issuer_path_origin_exception() -> None:
    ok = quirks.metadata_issuer_ok
    path_aware = "https://strava.example/.well-known/oauth-authorization-server/mcp"
    assert ok("https://strava.example", "https://strava.example/mcp", path_aware)
    assert ok("https://strava.example/", "https://strava.example/mcp", path_aware)
    # the same document reached another way, or naming something else: refused
    assert not ok("https://strava.example", "https://strava.example/mcp", None)
    oidc_path = "https://strava.example/.well-known/openid-configuration/mcp"
    assert not ok("https://strava.example", "https://strava.example/mcp", oidc_path)
    assert not ok("https://other.example", "https://strava.example/mcp", path_aware)
    assert not ok("https://strava.example/other", "https://strava.example/mcp", path_aware)
    # no path advertised: exact match only
    assert ok("https://as.example", "https://as.example", None)
    assert not ok("https://as.example/x", "https://as.example", None)


def _metadata(issuer: str) -> OAuthMetadata:
    return OAuthMetadata.model_validate(
        {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
        }
    )


def test_sdk_issuer_check_takes_the_exception_only_inside_our_flow() -> None:
    check = sdk_oauth2.validate_metadata_issuer
    metadata = _metadata("https://strava.example")
    path_aware = "https://strava.example/.well-known/oauth-authorization-server/mcp"
    with pytest.raises(OAuthFlowError, match="Authorization server metadata issuer mismatch"):
        check(metadata, "https://strava.example/mcp")  # no fetch URL known: strict
    token = quirks.metadata_fetch_url.set(path_aware)
    try:
        check(metadata, "https://strava.example/mcp")  # accepted
        with pytest.raises(OAuthFlowError, match="issuer mismatch"):
            check(_metadata("https://elsewhere.example"), "https://strava.example/mcp")
    finally:
        quirks.metadata_fetch_url.reset(token)


def test_google_parameters_only_for_google() -> None:
    url = "https://accounts.google.com/o/oauth2/v2/auth?client_id=a&scope=s&prompt=login"
    query = parse_qs(
        urlparse(quirks.authorize_url_extras(url, "https://accounts.google.com")).query
    )
    assert query["access_type"] == ["offline"]
    assert query["prompt"] == ["consent"]
    assert query["client_id"] == ["a"]
    other = "https://auth.example.com/authorize?client_id=a&scope=s"
    assert quirks.authorize_url_extras(other, "https://auth.example.com") == other
