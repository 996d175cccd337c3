"""oauth.client_metadata_url: a global setting in both dialects, checked, used by sign-in."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.config import load

URL = "https://example.org/portico/client.json"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PORTICO_HOME", str(tmp_path))
    monkeypatch.delenv("PORTICO_CLIENT_METADATA_URL", raising=False)
    (tmp_path / "config").mkdir()
    return tmp_path / "config"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("config.yaml", f"oauth:\n  client_metadata_url: {URL}\n"),
        ("mcp.toml", f'[oauth]\nclient_metadata_url = "{URL}"\n'),
    ],
)
def test_the_setting_is_read_in_both_dialects_and_reaches_sign_in(
    home: Path, name: str, text: str
) -> None:
    from portico.policy.prompters import NonInteractivePrompter
    from portico.services import build_services

    (home / name).write_text(text, encoding="utf-8")
    config = load()
    assert not config.errors, config.diagnostics
    assert config.settings.oauth_client_metadata_url == URL
    services = build_services(NonInteractivePrompter())
    services.configure(config)
    assert services.auth.client_metadata_url == URL


@pytest.mark.parametrize("bad", ["http://example.org/c.json", "https://example.org/", "x"])
def test_a_url_that_cannot_be_a_client_id_is_an_error_with_its_line(home: Path, bad: str) -> None:
    (home / "config.yaml").write_text(f"# mine\noauth:\n  client_metadata_url: {bad}\n")
    config = load()
    assert config.settings.oauth_client_metadata_url is None
    [problem] = [d for d in config.diagnostics if d.is_error]
    text = str(problem)
    assert "config.yaml:3" in text and "oauth.client_metadata_url" in text
    assert "https URL with a path" in text


def test_an_unknown_key_under_toml_oauth_is_a_warning(home: Path) -> None:
    (home / "mcp.toml").write_text('[oauth]\nclient_metadata = "x"\n')
    config = load()
    assert any("oauth.client_metadata" in str(d) for d in config.diagnostics)
    assert config.settings.oauth_client_metadata_url is None
