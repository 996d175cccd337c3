"""Shared fixtures: every test gets its own PORTICO_HOME and a project folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# CI runs the property tests on a fixed seed sequence so a red build always reproduces;
# local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO / "tests" / "peers" / "node_modules"


@pytest.fixture(autouse=True)
def portico_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "portico-home"
    home.mkdir()
    monkeypatch.setenv("PORTICO_HOME", str(home))
    yield home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".portico").mkdir(parents=True)
    return root


@pytest.fixture
def allow_logs() -> object:
    """Declares log records a test expects (``allow_logs(r"regex")``). A stand-in until
    the autouse log guard lands; that one's fixture of the same name replaces this."""

    def allow(pattern: str) -> None:
        del pattern

    return allow
