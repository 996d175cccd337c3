"""What a tool's ``_meta.ui`` means and the policy a view's page gets (no server)."""

from __future__ import annotations

import base64

import pytest

from portico.apps.csp import ViewCsp, origin, view_csp
from portico.apps.resource import ViewUnavailable, view_resource
from portico.runtime.registry import Registry
from portico.runtime.tool_views import ToolView, tool_view
from tests.helpers.tools import stdio_spec, tool

DEFAULT = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src 'none'; "
    "frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'none'"
)


def test_a_tool_without_metadata_is_for_everyone() -> None:
    assert tool_view("t", None) == (None, [])
    assert tool_view("t", {"other": 1}) == (None, [])


def test_visibility_and_the_view() -> None:
    view, problems = tool_view("t", {"ui": {"resourceUri": "ui://s/v", "visibility": ["app"]}})
    assert view == ToolView("ui://s/v", frozenset({"app"})) and problems == []
    assert not view.for_model and view.for_app
    flat, _ = tool_view("t", {"ui/resourceUri": "ui://s/old"})  # the deprecated key
    assert flat is not None and flat.resource_uri == "ui://s/old" and flat.for_model


@pytest.mark.parametrize(
    ("ui", "model", "words"),
    [
        ({"resourceUri": "https://evil.example/x"}, True, "is not a ui:// URI"),
        ({"visibility": "app"}, False, "not a list"),  # malformed: never to the model
        ({"visibility": ["app", "modle"]}, False, "unknown value(s) 'modle'"),
        ({"visibility": []}, False, ""),
    ],
)
def test_bad_metadata_is_named_and_never_widens(ui: dict, model: bool, words: str) -> None:  # type: ignore[type-arg]
    view, problems = tool_view("paint", {"ui": ui})
    assert (view is None or view.for_model) is model
    if words:
        [problem] = problems
        assert "'paint'" in problem and words in problem


def test_the_registry_offers_models_only_their_tools() -> None:
    reg = Registry()
    only_views = tool("refresh")
    only_views.meta = {"ui": {"resourceUri": "ui://s/v", "visibility": ["app"]}}
    typo = tool("paint")
    typo.meta = {"ui": {"visibility": "app"}}
    warnings = reg.set_server(stdio_spec("s"), [tool("plain"), only_views, typo])
    assert {t.name for t in reg.model_tools()} == {"s__plain"}
    assert {t.qualified for t in reg.tools()} == {"s__plain", "s__refresh", "s__paint"}
    assert [w for w in warnings if "'paint'" in w and w.startswith("server 's'")]


def test_no_declaration_is_the_restrictive_default() -> None:
    assert ViewCsp().header() == DEFAULT
    assert view_csp(None, resource="r").header() == DEFAULT
    assert ViewCsp().lines() == ["The view reaches nothing outside itself."]


@pytest.mark.parametrize(
    "entry",
    [
        "*",
        "'unsafe-eval'",
        "data:",
        "https://a.example; script-src *",
        "https://a.example 'unsafe-eval'",
        "https://a.example/path",
        "javascript:alert(1)",
        "https://ex\u0430mple.com",  # a Cyrillic letter: only punycode hosts go in a policy
        "https://*",
        "https://*.com",  # every .com site is not one origin
        "wss://*.co.uk",
        "https://*.github.io",
        42,
    ],
)
def test_only_plain_origins_enter_the_policy(entry: object) -> None:
    assert origin(entry) is None
    csp = view_csp({"csp": {"connectDomains": [entry]}}, resource="server 's', view ui://s/v")
    assert csp.connect == () and "connect-src 'none'" in csp.header()
    [dropped] = csp.dropped
    assert "ui://s/v" in dropped and "connectDomains" in dropped


def test_declared_origins_are_kept_once_each() -> None:
    csp = view_csp(
        {
            "csp": {
                "connectDomains": ["https://API.example.com/", "https://api.example.com"],
                "resourceDomains": ["https://*.cdn.example", "http://localhost:5173"],
                "frameDomains": ["https://www.youtube.com"],
            }
        },
        resource="r",
    )
    assert csp.connect == ("https://api.example.com",) and csp.dropped == ()
    header = csp.header()
    assert "connect-src https://api.example.com;" in header
    assert (
        "script-src 'self' 'unsafe-inline' https://*.cdn.example http://localhost:5173;" in header
    )
    assert "frame-src https://www.youtube.com;" in header and csp.reaches_out


def content(**fields: object) -> dict[str, object]:
    return {"contents": [{"uri": "ui://s/v", **fields}]}


def test_a_view_resource_is_checked() -> None:
    html = "<!DOCTYPE html><p>hi</p>"
    view = view_resource("s", "ui://s/v", content(mimeType="text/html;profile=mcp-app", text=html))
    assert view.html == html and view.csp == ViewCsp() and view.permissions == ()
    blob = base64.b64encode(html.encode()).decode()
    same = view_resource("s", "ui://s/v", content(mimeType="text/html;profile=mcp-app", blob=blob))
    assert same.digest == view.digest
    with pytest.raises(ViewUnavailable, match="'text/html', not 'text/html;profile=mcp-app'"):
        view_resource("s", "ui://s/v", content(mimeType="text/html", text=html))
    with pytest.raises(ViewUnavailable, match="not UTF-8 HTML"):
        view_resource("s", "ui://s/v", content(mimeType="text/html;profile=mcp-app", blob="%%%"))
    with pytest.raises(ViewUnavailable, match="no content"):
        view_resource("s", "ui://s/v", {"contents": []})
