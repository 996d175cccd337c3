"""The editor's form writes what was typed: every value shape of issue 12 reloads as typed.

The form writes through ConfigDocument, so a string that would read as something else
plain (a comment, a number, a bool, null...) must come back quoted from both dialects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from portico.config.load import load
from portico.ui.editor.form import MappingEditor
from tests.ui.editor_helpers import install_global, open_editor

pytestmark = pytest.mark.slow  # real servers, processes or the app

# What a single-line field can hold (an empty field unsets the key, by design).
TYPED = [
    "abc #def",
    "0123",
    "0x1F",
    "1.10",
    "yes",
    "null",
    "~",
    "a: b",
    " leading",
    "trailing ",
    "!pa$$word",
    "*star",
    "[y]",
    "{x}",
    "- item",
    "12:30",
    "'single",
    "é ü 中",
]


def _type(editor: QLineEdit, text: str) -> None:
    editor.setFocus()
    editor.setText(text)
    editor.editingFinished.emit()


@pytest.mark.parametrize("corpus", ["edit_servers.toml", "edit_servers.yaml"])
async def test_form_values_reload_exactly_as_typed(
    qtbot: QtBot, project: Path, corpus: str
) -> None:
    path = install_global(corpus)
    window = await open_editor(qtbot, project)
    assert window.select("github", path)
    env = window.form.fields["env"]
    assert isinstance(env, MappingEditor)
    for row, value in enumerate(TYPED, start=1):
        env.set_entry(row, f"V{row}", value)
    cwd = window.form.fields["cwd"].editor
    assert isinstance(cwd, QLineEdit)
    _type(cwd, "0123 #not a comment")
    assert await window.save_now() == [path]

    spec = load(project).server("github")
    assert spec is not None
    expected = {f"V{row}": value for row, value in enumerate(TYPED, start=1)}
    assert {k: v for k, v in spec.env if k != "GITHUB_PERSONAL_ACCESS_TOKEN"} == expected
    assert spec.cwd == "0123 #not a comment"
    # the file's own comments are all still there
    source = install_source(corpus).splitlines()
    before = [line.strip() for line in source if line.strip().startswith("#")]
    after = path.read_text()
    assert all(comment in after for comment in before)


def install_source(corpus: str) -> str:
    return (Path(__file__).parents[2] / "config" / "corpus" / corpus).read_text()
