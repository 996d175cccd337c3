"""Config editor: form edits, raw edits, sync, validation at the field, save, conflicts."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QLineEdit
from pytestqt.qtbot import QtBot

from portico.config import schema
from portico.config.load import parse_text
from portico.config.model import Scope
from portico.ui.editor.form import MappingEditor
from tests.ui.editor_helpers import diff, install_global, open_editor, ready


def _type(editor: QLineEdit, text: str) -> None:
    editor.setFocus()
    editor.setText(text)
    editor.editingFinished.emit()


async def test_form_edit_saves_exactly_one_line(qtbot: QtBot, project: Path) -> None:
    path = install_global("edit_servers.toml")
    before = path.read_text()
    window = await open_editor(qtbot, project)
    rows = window.server_list.rows()
    assert ("filesystem", "global · toml") in rows and ("docs", "global · toml") in rows
    # Files that do not exist yet are listed as new.
    labels = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert "mcp.toml (project, new)" in labels and "config.yaml (global, new)" in labels

    assert window.select("filesystem", path)
    timeout = window.form.fields["timeout"]
    assert isinstance(timeout.editor, QLineEdit)
    assert timeout.editor.text() == "15000"
    assert window.form.labels["timeout"].text() == "timeout (ms)"
    default_ms = schema.fmt(schema.key("connect_timeout").default * 1000)
    placeholder = window.form.fields["connect_timeout"].editor.placeholderText()  # type: ignore[attr-defined]
    assert placeholder == f"default: {default_ms}"
    _type(timeout.editor, "20000")
    assert "timeout = 20000  # large folders list slowly" in window.raw_tab(path).toPlainText()
    written = await window.save_now()

    assert written == [path]
    after = path.read_text()
    assert diff(before, after) == [
        "-timeout = 15000  # large folders list slowly",
        "+timeout = 20000  # large folders list slowly",
    ]
    # Nothing else was written: the new (empty) files stay absent.
    assert not (project / ".portico" / "mcp.toml").exists()
    assert not window.dirty


async def test_yaml_bool_and_nested_key_edit_one_line_each(qtbot: QtBot) -> None:
    path = install_global("edit_servers.yaml")
    before = path.read_text()
    window = await open_editor(qtbot)
    assert window.select("github", path)
    enabled = window.form.fields["enabled"].editor
    assert isinstance(enabled, QComboBox)
    assert enabled.currentText() == "false"
    enabled.setCurrentIndex(enabled.findText("true"))
    enabled.activated.emit(enabled.currentIndex())
    await window.save_now()
    assert diff(before, path.read_text()) == ["-    enabled: false", "+    enabled: true"]


async def test_raw_edit_syncs_to_form_and_form_to_raw(qtbot: QtBot) -> None:
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    window.select("docs", path)
    raw = window.raw_tab(path)
    port = window.form.fields["oauth.callback_port"].editor
    assert isinstance(port, QLineEdit) and port.text() == "33418"

    raw.setPlainText(raw.toPlainText().replace("callback_port = 33418", "callback_port = 40000"))
    raw.flush()  # what the debounce timer does
    await ready(window)  # the edit is read in a worker
    assert port.text() == "40000"
    assert window.file_for(path).doc.get("docs", "oauth", "callback_port") == 40000  # type: ignore[union-attr]

    # A form edit goes into the raw text.
    _type(window.form.fields["cost_unit"].editor, "tokens")  # type: ignore[arg-type]
    assert 'cost_unit = "tokens"' in raw.toPlainText()
    # Clearing a field removes the key.
    _type(port, "")
    assert "callback_port" not in raw.toPlainText()

    # A raw edit that renames a server shows in the list.
    raw.setPlainText(raw.toPlainText().replace("[mcp.memory]", "[mcp.recall]"))
    raw.flush()
    await ready(window)  # the edit is read in a worker
    names = [name for name, _badge in window.server_list.rows()]
    assert "recall" in names and "memory" not in names


async def test_env_entry_edit_and_new_server_file(qtbot: QtBot, project: Path) -> None:
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot, project)
    window.select("github", path)
    env = window.form.fields["env"]
    assert isinstance(env, MappingEditor)
    assert env.entries == {"GITHUB_PERSONAL_ACCESS_TOKEN": "${keyring:github-pat}"}
    env.set_entry(1, "LOG_LEVEL", "debug")
    assert 'LOG_LEVEL = "debug"' in window.raw_tab(path).toPlainText()
    assert window.file_for(path).doc.get("github", "environment") == {  # type: ignore[union-attr]
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${keyring:github-pat}",
        "LOG_LEVEL": "debug",
    }


async def test_bad_value_shows_cli_message_at_field_and_marker(qtbot: QtBot) -> None:
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    window.select("docs", path)
    port = window.form.fields["oauth.callback_port"]
    _type(port.editor, "99999")  # type: ignore[arg-type]
    await ready(window)  # the check runs in a worker

    text = window.raw_tab(path).toPlainText()
    expected = parse_text(text, path, Scope.GLOBAL).diagnostics
    assert len(expected) == 1
    cli_message = str(expected[0])  # what `portico config check` prints
    assert cli_message.endswith("docs.oauth.callback_port: 99999 is above the maximum 65535")
    assert port.error_text == cli_message
    assert port.error_label.isVisible()
    line = (
        text.splitlines().index('oauth = { client_id = "portico-docs", callback_port = 99999 }') + 1
    )
    assert expected[0].line == line
    assert window.raw_tab(path).markers == {line: [cli_message]}
    assert window.raw_tab(path).message_at_line(line) == cli_message
    assert len(window.raw_tab(path).extraSelections()) == 1

    # Fixing it in the raw tab clears the field error and the marker.
    raw = window.raw_tab(path)
    raw.setPlainText(text.replace("99999", "33419"))
    raw.flush()
    await ready(window)
    assert port.error_text == ""
    assert raw.markers == {}


async def test_unparsable_raw_text_marks_line_and_keeps_going(qtbot: QtBot) -> None:
    path = install_global("edit_servers.yaml")
    window = await open_editor(qtbot)
    window.select("filesystem", path)
    raw = window.raw_tab(path)
    good = raw.toPlainText()
    raw.setPlainText(good.replace("    timeout: 15", "    timeout: [15"))
    raw.flush()
    await ready(window)
    assert raw.markers, "a syntax error is marked"
    assert not window.form.isEnabled()
    raw.setPlainText(good)
    raw.flush()
    await ready(window)
    assert raw.markers == {}
    assert window.form.isEnabled()
    assert window.form.fields["timeout"].editor.text() == "15"  # type: ignore[attr-defined]


async def test_conflict_on_save_and_reload(qtbot: QtBot) -> None:
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    window.select("filesystem", path)
    _type(window.form.fields["cost_unit"].editor, "tokens")  # type: ignore[arg-type]
    outside = path.read_text().replace("defer_tools = 12", "defer_tools = 13")
    path.write_text(outside)

    assert await window.save_now() == []
    assert window.conflict_bar.isVisible()
    assert "changed on disk" in window.conflict_label.text()
    assert path.read_text() == outside  # nothing was overwritten

    window.reload_button.click()
    await ready(window)
    assert not window.conflict_bar.isVisible()
    assert window.raw_tab(path).toPlainText() == outside
    assert window.form.fields["cost_unit"].editor.text() == ""  # type: ignore[attr-defined]
    # After the reload, edits save again.
    _type(window.form.fields["cost_unit"].editor, "credits-x")  # type: ignore[arg-type]
    assert await window.save_now() == [path]
    assert diff(outside, path.read_text()) == ['+cost_unit = "credits-x"']


async def test_rename_and_project_replaces_global(qtbot: QtBot, project: Path) -> None:
    path = install_global("edit_servers.toml")
    project_yaml = project / ".portico" / "config.yaml"
    project_yaml.write_text("mcp_servers:\n  docs:\n    url: https://intranet.example/mcp\n")
    window = await open_editor(qtbot, project)
    rows = window.server_list.rows()
    assert ("docs", "global · toml · replaced") in rows
    assert ("docs", "project · yaml") in rows
    assert window.select("docs")  # by name: the project's, which is the one used
    assert window.current() == (window.file_for(project_yaml), "docs")

    window.select("memory", path)
    _type(window.form.name_edit, "recall")
    assert window.current() == (window.file_for(path), "recall")
    assert "[mcp.recall]" in window.raw_tab(path).toPlainText()
    _type(window.form.name_edit, "bad.name")  # refused with the reason, name restored
    assert "contains a dot" in window.notice.text()
    assert window.form.name_edit.text() == "recall"


async def test_save_refuses_text_that_does_not_parse(qtbot: QtBot) -> None:
    path = install_global("edit_servers.toml")
    before = path.read_text()
    window = await open_editor(qtbot)
    raw = window.raw_tab(path)
    raw.setPlainText(before.replace("[mcp.memory]", "[mcp.memory"))
    assert await window.save_now() == []  # the pending raw edit is applied first
    assert "does not parse" in window.notice.text()
    assert path.read_text() == before
    assert [s for s, _b in window.server_list.rows()] == []


async def test_typed_value_counts_as_an_edit_before_focus_leaves(
    qtbot: QtBot, project: Path
) -> None:
    path = install_global("edit_servers.toml")
    before = path.read_text()
    window = await open_editor(qtbot, project)
    assert window.select("filesystem", path)
    timeout = window.form.fields["timeout"].editor
    assert isinstance(timeout, QLineEdit)
    assert not window.save_button.isEnabled()
    timeout.setFocus()
    qtbot.keyClick(timeout, "7")  # typed, focus still in the field
    assert window.save_button.isEnabled()
    assert window.dirty
    window.close()  # Ctrl+W: the unsaved prompt, not a silent close
    box = window.confirmation
    assert box is not None and box.isVisible() and path.name in box.text()
    assert path.read_text() == before


async def test_outside_change_keeps_a_typed_value(qtbot: QtBot, project: Path) -> None:
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot, project)
    assert window.select("filesystem", path)
    timeout = window.form.fields["timeout"].editor
    assert isinstance(timeout, QLineEdit)
    timeout.setFocus()
    timeout.selectAll()
    qtbot.keyClicks(timeout, "20000")  # typed, focus still in the field
    # Another program changes the file (another line): the typed value is re-applied.
    path.write_text("# outside\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    await window.check_disk()
    assert "re-applied" in window.notice.text()
    assert timeout.text() == "20000" and window.dirty
    await window.save_now()
    on_disk = path.read_text(encoding="utf-8")
    assert on_disk.startswith("# outside\n") and "timeout = 20000" in on_disk
