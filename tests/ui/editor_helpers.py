"""Fixtures shared by the config editor tests: corpus files in place, an open window."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

from pytestqt.qtbot import QtBot

from portico import paths
from portico.ui.editor.window import ConfigEditorWindow

CORPUS = Path(__file__).resolve().parents[1] / "config" / "corpus"
FIXTURES = Path(__file__).resolve().parents[1] / "config" / "import_fixtures"


def install_global(name: str) -> Path:
    """Copy a corpus file into PORTICO_HOME as the global mcp.toml or config.yaml."""
    p = paths.paths()
    target = p.global_toml if name.endswith(".toml") else p.global_yaml
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / name, target)
    return target


async def open_editor(
    qtbot: QtBot, project: Path | None = None, **kwargs: object
) -> ConfigEditorWindow:
    """A config editor shown, its files read (``ready``)."""
    window = ConfigEditorWindow(project, **kwargs)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    window.show()
    await ready(window)
    return window


async def ready(window: ConfigEditorWindow) -> ConfigEditorWindow:
    """Wait until the editor has read its files (it opens saying "Reading…") and no look
    at the disk, reload or save runs."""
    from tests.ui.qt_helpers import until

    await until(lambda: not window.reading and window.ops.running == 0, 20, "the editor's files")
    return window


async def saved(window: ConfigEditorWindow) -> None:
    """Wait until the save the person started (Save, Ctrl+S) has finished."""
    from tests.ui.qt_helpers import until

    await until(lambda: window.ops.running == 0, 20, "the save to finish")


def diff(before: str, after: str) -> list[str]:
    """The changed lines (+/-) of a unified diff, without headers and context."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def write_big_config(servers: int = 400) -> Path:
    """The global mcp.toml with ``servers`` commented servers (the GUI stall tests' file)."""
    toml_path = paths.paths().global_toml
    toml_path.parent.mkdir(parents=True, exist_ok=True)
    toml_path.write_text(
        "# my servers\n"
        + "".join(
            f'\n# server {i}\n[mcp.t{i}]\ncommand = ["npx", "-y", "pkg-{i}"]  # launcher\n'
            f'environment = {{ A = "x" }}\ntimeout = 30000\n'
            for i in range(servers)
        ),
        encoding="utf-8",
    )
    return toml_path
