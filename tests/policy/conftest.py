"""Policy test helpers: a scripted person (Prompter), project-scope specs, the asker server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.person import HANG, ScriptedPerson, eventually, refused
from tests.helpers.specs import asker_spec, config_of, spec_for

__all__ = [
    "ASKER",
    "HANG",
    "ScriptedPerson",
    "asker_spec",
    "config_of",
    "eventually",
    "refused",
    "spec_for",
]

REPO = Path(__file__).resolve().parents[2]
ASKER = REPO / "tests" / "servers" / "asker.py"
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"
NODE = REPO / "tests" / "peers" / "node_modules" / ".bin" / "node"
EVERYTHING = (
    (REPO / "tests" / "peers" / "node_modules" / "@modelcontextprotocol" / "server-everything")
    / "dist"
    / "index.js"
)


@pytest.fixture
def person() -> ScriptedPerson:
    return ScriptedPerson()
