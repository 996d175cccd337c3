"""The examples in docs/security.md load cleanly and mean what the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from portico.config.load import parse_text
from portico.config.model import Scope

PAGE = Path(__file__).resolve().parent.parent / "docs" / "security.md"
BLOCKS = re.findall(r"```(toml|yaml)\n(.*?)```", PAGE.read_text(), re.S)


@pytest.mark.parametrize(("lang", "text"), BLOCKS, ids=[lang for lang, _ in BLOCKS])
def test_security_examples_set_allow_private_endpoints(
    lang: str, text: str, tmp_path: Path
) -> None:
    name = "mcp.toml" if lang == "toml" else "config.yaml"
    config = parse_text(text, tmp_path / name, Scope.GLOBAL)
    assert [str(d) for d in config.diagnostics] == []
    (spec,) = config.servers
    assert spec.oauth is not None and spec.oauth.allow_private_endpoints


def test_both_dialects_are_shown() -> None:
    assert {lang for lang, _ in BLOCKS} == {"toml", "yaml"}
