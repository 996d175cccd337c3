"""The examples in docs/roots-and-tls.md load cleanly and mean what the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from portico.config.load import parse_text

PAGE = Path(__file__).resolve().parent.parent / "docs" / "roots-and-tls.md"
BLOCKS = re.findall(r"```(toml|yaml)\n(.*?)```", PAGE.read_text(), re.S)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for folder in ("src", "notes", "Documents/journal"):
        (home / folder).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def _load(index: int, tmp_path: Path) -> object:
    lang, text = BLOCKS[index]
    config = parse_text(text, tmp_path / ("mcp.toml" if lang == "toml" else "config.yaml"))
    assert [str(d) for d in config.diagnostics] == []
    return config


def test_the_roots_examples(home: Path, tmp_path: Path) -> None:
    toml = _load(0, tmp_path)
    roots = {s.name: s.roots for s in toml.servers}  # type: ignore[attr-defined]
    assert roots == {"notes": ("~/notes", "~/Documents/journal"), "web": ()}
    assert toml.settings.default_roots == ("~/src",)  # type: ignore[attr-defined]
    yaml = _load(1, tmp_path)
    assert yaml.servers[0].roots == ("~/notes", "~/Documents/journal")  # type: ignore[attr-defined]
    assert yaml.settings.default_roots == ("~/src",)  # type: ignore[attr-defined]


def test_the_ca_cert_example(home: Path, tmp_path: Path) -> None:
    config = _load(2, tmp_path)
    (spec,) = config.servers  # type: ignore[attr-defined]
    assert spec.ca_cert == "~/.certs/company-ca.pem" and spec.client_cert is not None


def test_the_page_has_both_dialects() -> None:
    assert [lang for lang, _ in BLOCKS] == ["toml", "yaml", "toml"]
