"""The one masking module: URLs, values of secret-bearing keys, free text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from portico.config.masking import (
    is_secret_key,
    mask_text,
    mask_url,
    mask_value,
    show_value,
)


def test_mask_value_keeps_references_hides_literals() -> None:
    assert mask_value("ghp_123456") == "********"
    assert mask_value("${keyring:gh}") == "${keyring:gh}"
    assert mask_value("Bearer ${env:TOKEN}") == "Bearer ${env:TOKEN}"
    assert mask_value("Bearer sk-live-123 ${env:X}") == "********"
    assert mask_value("") == ""


def test_mask_url_userinfo_and_query() -> None:
    assert mask_url("https://me:pw@host.example/mcp?api_key=abc&team=x") == (
        "https://me:***@host.example/mcp?api_key=***&team=x"
    )
    assert mask_url("https://ghp_abc@host.example/mcp") == "https://***@host.example/mcp"
    assert (
        mask_url("https://h.example/mcp?token=${env:T}") == "https://h.example/mcp?token=${env:T}"
    )
    assert mask_url("https://h.example/cb#access_token=xyz&x=1") == (
        "https://h.example/cb#access_token=***&x=1"
    )
    assert mask_url("http://[::1") == "********"  # unparsable: nothing of it is shown


def test_secret_keys() -> None:
    for key in (
        "Authorization",
        "X-Api-Key",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "oauth.client_secret",
        "client_cert.password",
        "oauth.idp_client_secret",
        "oauth.id_token",
        "Cookie",
    ):
        assert is_secret_key(key), key
    for key in ("timeout", "url", "command", "X-Team", "TEAM", "oauth.scope"):
        assert not is_secret_key(key), key


def test_show_value_never_prints_secret_key_values() -> None:
    assert "12345" not in show_value("oauth.client_secret", 12345)
    assert "sk-live" not in show_value("Authorization", "Bearer sk-live-9")
    assert show_value("timeout", 5) == "5"
    assert "pw" not in show_value("url", "https://u:pw@h.example/")


def test_mask_text_masks_urls_and_known_values() -> None:
    text = "cannot reach https://u:hunter2@h.example/mcp?key=abc: token sk-live-123 refused"
    shown = mask_text(text, ["sk-live-123"])
    assert "hunter2" not in shown and "abc" not in shown and "sk-live-123" not in shown
    assert "h.example/mcp" in shown


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=20))
def test_password_never_survives(password: str) -> None:
    url = f"https://user:{password}@host.example/mcp?x=1"
    assert f":{password}@" not in mask_url(url)
    assert f":{password}@" not in mask_text(f"error at {url} now")
