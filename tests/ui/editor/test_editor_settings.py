"""The editor's Settings tab edits the top-level settings of each file, from the schema's
setting table: defer_tools and discovery_concurrency in mcp.toml, approvals and secrets in
config.yaml; a cleared field removes the key (the default applies); the result loads."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QSpinBox
from pytestqt.qtbot import QtBot

from portico.config import load
from portico.config.model import Dialect
from portico.paths import paths
from portico.ui.editor.settings_form import settings_for
from tests.ui.editor_helpers import diff, install_global, open_editor


def _choose_file(window: object, name: str) -> None:
    combo = window.settings_file  # type: ignore[attr-defined]
    for i in range(combo.count()):
        if combo.itemText(i).startswith(name):
            combo.setCurrentIndex(i)
            return
    raise AssertionError(f"no file {name} in {[combo.itemText(i) for i in range(combo.count())]}")


async def test_settings_are_edited_per_file_and_load(qtbot: QtBot) -> None:
    toml = install_global("edit_servers.toml")
    before = toml.read_text()
    window = await open_editor(qtbot)
    assert {s.name for s in settings_for(Dialect.TOML)} >= {"defer_tools", "discovery_concurrency"}
    assert {s.name for s in settings_for(Dialect.YAML)} >= {
        "approvals.mode",
        "secrets.file_fallback",
    }

    _choose_file(window, "mcp.toml (global")
    spin = window.settings.widgets["discovery_concurrency"]
    assert isinstance(spin, QSpinBox)
    spin.setValue(3)
    spin.editingFinished.emit()
    file = window.file_for(toml)
    assert diff(before, file.text) == [
        "+discovery_concurrency = 3"
    ] or "+discovery_concurrency = 3" in diff(before, file.text)

    _choose_file(window, "config.yaml (global")
    mode = window.settings.widgets["approvals.mode"]
    assert isinstance(mode, QComboBox)
    mode.setCurrentIndex(mode.findData("off"))
    mode.activated.emit(mode.currentIndex())
    yaml = window.file_for(paths().global_yaml)
    assert 'mode: "off"' in yaml.text  # quoted: a bare off is a YAML 1.1 boolean
    await window.save_now()
    config = load(None)
    assert config.settings.discovery_concurrency == 3
    assert config.settings.approvals_mode == "off"

    # clearing a field removes the key again
    _choose_file(window, "mcp.toml (global")
    spin = window.settings.widgets["discovery_concurrency"]
    spin.setValue(spin.minimum())
    spin.editingFinished.emit()
    assert "discovery_concurrency" not in window.file_for(toml).text
    window.close()


async def test_roots_for_global_servers_are_set_in_the_settings_tab(
    qtbot: QtBot, tmp_path: object
) -> None:
    """The top-level roots (a list, typed in the file's own syntax) is a row of the
    Settings tab in both dialects; what is typed is written and loads."""
    from pathlib import Path

    from PySide6.QtWidgets import QLineEdit

    src = Path(str(tmp_path)) / "src"
    src.mkdir()
    toml = install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    assert "roots" in {s.name for s in settings_for(Dialect.TOML)}
    assert "roots" in {s.name for s in settings_for(Dialect.YAML)}
    _choose_file(window, "mcp.toml (global")
    line = window.settings.widgets["roots"]
    assert isinstance(line, QLineEdit)
    qtbot.keyClicks(line, f'["{src}"]')
    line.editingFinished.emit()
    assert f'roots = ["{src}"]' in window.file_for(toml).text
    await window.save_now()
    config = load(None)
    assert config.settings.default_roots == (str(src),)
    assert all(s.roots == (str(src),) for s in config.servers if s.source.path == toml)
    window.close()


async def test_settings_defaults_read_as_a_person_reads_them(qtbot: QtBot) -> None:
    install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    _choose_file(window, "mcp.toml (global")
    shown = [w.toolTip() for w in window.settings.widgets.values()]
    assert shown
    for text in shown:
        assert "default: None" not in text and "default: ()" not in text, text
        assert "default: False" not in text and "default: True" not in text, text


async def test_a_value_typed_in_settings_is_an_edit_before_focus_leaves(qtbot: QtBot) -> None:
    """Issue 26, item 10, in the Settings tab: text typed in a field that still has focus
    enables Save, makes closing ask, and survives another program's change to the file."""
    toml = install_global("edit_servers.toml")
    before = toml.read_text()
    window = await open_editor(qtbot)
    _choose_file(window, "mcp.toml (global")
    assert not window.save_button.isEnabled()
    spin = window.settings.widgets["discovery_concurrency"]
    assert isinstance(spin, QSpinBox)
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "3")  # typed, focus still in the field
    assert window.save_button.isEnabled() and window.dirty
    window.close()  # Ctrl+W: the unsaved question, not a silent close
    box = window.confirmation
    assert box is not None and box.isVisible() and toml.name in box.text()
    assert toml.read_text() == before
    box.close()

    # another program changes the file: the typed value is asked about, never dropped
    toml.write_text("# outside\n" + toml.read_text(), encoding="utf-8")
    said = await window.check_disk()
    assert window.conflict_bar.isVisible() and any(str(toml) in line for line in said)
    assert window.dirty and toml.read_text().startswith("# outside\n")
    assert "discovery_concurrency" in window.file_for(toml).text
    window.close()
