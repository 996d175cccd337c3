"""The config examples in README.md load without a single diagnostic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from portico.config.load import parse_text
from portico.config.model import Scope

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```(toml|yaml)\n(.*?)```", README.read_text(), re.S)


def test_readme_has_both_dialects() -> None:
    assert {lang for lang, _ in BLOCKS} == {"toml", "yaml"}


@pytest.mark.parametrize(("lang", "text"), BLOCKS, ids=[lang for lang, _ in BLOCKS])
def test_readme_example_loads_cleanly(lang: str, text: str, tmp_path: Path) -> None:
    name = "mcp.toml" if lang == "toml" else "config.yaml"
    config = parse_text(text, tmp_path / name, Scope.GLOBAL)
    assert [str(d) for d in config.diagnostics] == []
    assert [s.name for s in config.servers] == ["everything", "docs"]
