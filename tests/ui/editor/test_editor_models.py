"""The config editor's Models tab: add, edit and remove model providers, store the key in
the keychain (the file gets only the reference), pick the default model and test the
connection against the scripted model server; the saved files are checked byte for byte
in both dialects, and project files may not configure models."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.config import load
from portico.config.load import load_files
from portico.config.model import ModelPrice, Scope
from portico.paths import paths
from portico.ui.editor.models_tab import AddProviderDialog, ModelsTab
from portico.ui.editor.window import ConfigEditorWindow
from portico.ui.facade import RuntimeThread
from tests.helpers.keyrings import MemoryKeyring
from tests.helpers.model_server import model_server, models
from tests.servers.model_server import MODELS, ModelServer, text
from tests.ui.editor_helpers import open_editor, ready, saved
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the scripted model server

__all__ = ["model_server", "models"]

TOML = """\
# my config
[mcp.files]  # the files server
command = ["npx", "-y", "server-filesystem"]

# the end
"""

YAML = """\
# mine
mcp_servers:
  files: {command: npx}
models:
  providers:
    cloud:  # paid
      kind: openai
      api_key: "${env:CLOUD_KEY}"
      models: [gpt-4.1]
    old:
      kind: anthropic
      models: [claude-x]
  default: old/claude-x  # for now
"""


def _write(path: Path, text_: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text_)
    return path


def _models_tab(window: ConfigEditorWindow, file_name: str) -> ModelsTab:
    window.tabs.setCurrentWidget(window.models)
    tab = window.models
    combo = tab.file_combo
    labels = [combo.itemText(i) for i in range(combo.count())]
    index = next(i for i, label in enumerate(labels) if label.startswith(file_name))
    combo.setCurrentIndex(index)
    return tab


def _choose_default(qtbot: QtBot, tab: ModelsTab, ref: str | None) -> None:
    combo = tab.default_combo
    index = combo.findData(ref)
    assert index >= 0, [combo.itemText(i) for i in range(combo.count())]
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def _type(qtbot: QtBot, line: object, value: str) -> None:
    line.clear()  # type: ignore[attr-defined]
    qtbot.keyClicks(line, value)
    qtbot.keyClick(line, Qt.Key.Key_Return)


async def test_add_a_provider_with_a_keychain_key_default_and_test(
    qtbot: QtBot, memory_keyring: MemoryKeyring, models: ModelServer, runtime: RuntimeThread
) -> None:
    toml = _write(paths().global_toml, TOML)
    window = await open_editor(qtbot, runtime=runtime)  # Test connection runs on the runtime thread
    tab = _models_tab(window, "mcp.toml (global")
    assert not window.test_button.isVisible()  # it tests servers: not offered here
    assert tab.provider_list.count() == 0
    assert not tab.form.test_button.isEnabled()

    tab.add_button.click()
    dialog = await until(lambda: next(iter(tab.dialogs), None), 5, "the add dialog")
    assert isinstance(dialog, AddProviderDialog)
    qtbot.keyClicks(dialog.name, "bad name")
    dialog.add_button.click()
    assert "provider name" in dialog.problem.text() and dialog.isVisible()
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, "local")
    qtbot.keyClicks(dialog.base_url, models.openai_url)
    qtbot.keyClicks(dialog.models, "gpt-test, gpt-mini")
    dialog.add_button.click()
    assert not dialog.isVisible()
    assert tab.selected() == "local"
    assert tab.provider_list.item(0).text() == "local (openai)"

    # A key typed where the reference goes never reaches the file.
    _type(qtbot, tab.form.api_key, "sk-secret-123")
    assert "sk-secret-123" not in window.file_for(toml).text
    assert "not a reference" in tab.notice.text()

    qtbot.keyClicks(tab.form.key, "sk-secret-123")
    tab.form.keychain_button.click()
    await until(lambda: "keyring:local-api-key" in window.file_for(toml).text, 5, "the reference")
    assert memory_keyring.items[("portico", "local-api-key")] == "sk-secret-123"
    assert tab.form.key.text() == ""
    assert tab.form.api_key.text() == "${keyring:local-api-key}"
    assert "Stored the key as local-api-key" in tab.notice.text()

    _choose_default(qtbot, tab, "local/gpt-mini")

    models.script(text("ready"))
    tab.form.test_button.click()
    await until(lambda: "answered" in tab.form.test_result.text(), 20, "the test answer")
    assert tab.form.test_result.text().startswith("local/gpt-test answered in ")
    assert tab.last_test is not None and tab.last_test.text == "ready"
    request = models.requests[-1]
    assert request.headers.get("authorization") == "Bearer sk-secret-123"
    assert request.body["model"] == "gpt-test"

    assert "sk-secret-123" not in window.raw_tab(toml).toPlainText()
    window.save_button.click()
    await saved(window)
    assert toml.read_text() == (
        "# my config\n"
        'default_model = "local/gpt-mini"\n\n'
        "[mcp.files]  # the files server\n"
        'command = ["npx", "-y", "server-filesystem"]\n\n'
        "[models.providers.local]\n"
        'kind = "openai"\n'
        f'base_url = "{models.openai_url}"\n'
        'models = ["gpt-test", "gpt-mini"]\n'
        'api_key = "${keyring:local-api-key}"\n\n'
        "# the end\n"
    )
    config = load(None)
    assert [p.name for p in config.models.providers] == ["local"]
    assert config.models.default == "local/gpt-mini"
    window.close()


async def test_edit_and_remove_in_yaml_with_errors_at_the_key(
    qtbot: QtBot, memory_keyring: MemoryKeyring, models: ModelServer
) -> None:
    yaml = _write(paths().global_yaml, YAML)
    window = await open_editor(qtbot)
    tab = _models_tab(window, "config.yaml (global")
    assert [tab.provider_list.item(i).text() for i in range(tab.provider_list.count())] == [
        "cloud (openai)",
        "old (anthropic)",
    ]
    assert tab.default_combo.currentData() == "old/claude-x"
    # A raw edit shows in the tab once it settles (and a half-typed one says why not).
    raw = window.raw_tab(yaml)
    raw.setPlainText(YAML.replace("    old:\n", "    typed:\n      kind: openai\n    old:\n"))
    raw.flush()
    await ready(window)  # the edit is read in a worker
    assert tab.select("typed")
    raw.setPlainText(YAML)
    raw.flush()
    await ready(window)  # the edit is read in a worker
    assert not tab.select("typed")
    assert tab.select("cloud")

    _type(qtbot, tab.form.base_url, "ftp://nope")
    await ready(window)  # the check runs in a worker
    error = tab.form.error_text("base_url")
    assert f"{yaml}:" in error and "models.providers.cloud.base_url" in error
    assert "http:// or https://" in error
    assert f"{yaml}:" in tab.problems.text()

    _type(qtbot, tab.form.base_url, models.openai_url)
    await ready(window)
    assert tab.form.error_text("base_url") == ""
    _type(qtbot, tab.form.models, "gpt-4.1, gpt-test")

    assert tab.select("old")
    tab.remove_button.click()
    assert "the default model named it, so it was cleared too" in tab.notice.text().lower()
    assert tab.default_combo.currentData() is None

    window.save_button.click()
    await saved(window)
    assert yaml.read_text() == (
        "# mine\n"
        "mcp_servers:\n"
        "  files: {command: npx}\n"
        "models:\n"
        "  providers:\n"
        "    cloud:  # paid\n"
        "      kind: openai\n"
        '      api_key: "${env:CLOUD_KEY}"\n'
        "      models: [gpt-4.1, gpt-test]\n"
        f"      base_url: {models.openai_url}\n"
    )
    # Testing resolves ${env:...}: a missing variable is said in plain words.
    tab.form.test_button.click()
    await until(lambda: "did not answer" in tab.form.test_result.text(), 20, "the failure")
    assert "CLOUD_KEY" in tab.form.test_result.text()
    window.close()


async def test_project_files_may_not_configure_models(qtbot: QtBot, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    local = _write(
        project / ".portico" / "config.yaml",
        "models:\n  providers:\n    evil: {kind: openai, base_url: 'http://evil.example/v1'}\n",
    )
    window = await open_editor(qtbot, project)
    tab = window.models
    offered = [tab.file_combo.itemText(i) for i in range(tab.file_combo.count())]
    assert offered and all("(global" in label for label in offered)
    assert "project file may not add providers" in tab.scope_note.text()
    problems = tab.problems.text()
    assert f"{local}:1: models: warning: ignored: a project file may not add" in problems
    window.close()


async def test_a_locked_keyring_stores_nothing_and_writes_no_reference(qtbot: QtBot) -> None:
    import keyring

    from tests.helpers.keyrings import LockedKeyring

    yaml = _write(paths().global_yaml, YAML)
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        window = await open_editor(qtbot)
        tab = _models_tab(window, "config.yaml (global")
        assert tab.select("old")
        qtbot.keyClicks(tab.form.key, "sk-ant-secret")
        qtbot.keyClick(tab.form.key, Qt.Key.Key_Return)  # Enter stores, as the button does
        await until(lambda: "Could not store the key" in tab.notice.text(), 5, "the refusal")
        assert "locked" in tab.notice.text()
        assert window.file_for(yaml).text == YAML and not window.dirty
        assert "sk-ant-secret" not in tab.notice.text()
        window.close()
    finally:
        keyring.set_keyring(previous)


async def test_ctrl_s_while_typing_saves_the_field_and_the_other_file_s_default_is_named(
    qtbot: QtBot,
) -> None:
    yaml = _write(paths().global_yaml, YAML)
    window = await open_editor(qtbot)
    window.activateWindow()
    await until(window.isActiveWindow, 5, "the editor to be active")
    tab = _models_tab(window, "mcp.toml (global")
    assert tab.default_combo.itemText(0) == "(none here; config.yaml sets old/claude-x)"
    tab = _models_tab(window, "config.yaml (global")
    assert tab.select("old")
    tab.form.base_url.setFocus()
    qtbot.keyClicks(tab.form.base_url, "https://api.example.com")
    qtbot.keyClick(tab.form.base_url, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    await saved(window)
    assert yaml.read_text() == YAML.replace(
        "      models: [claude-x]\n",
        "      models: [claude-x]\n      base_url: https://api.example.com\n",
    )
    window.close()


async def test_fetch_list_offers_the_server_s_models_to_add(
    qtbot: QtBot, models: ModelServer
) -> None:
    yaml = _write(
        paths().global_yaml,
        f"models:\n  providers:\n    local:\n      kind: openai\n"
        f"      base_url: {models.openai_url}\n      models: [gpt-test]\n",
    )
    models.set_models(["alpha", "beta", "gpt-test"])
    try:
        window = await open_editor(qtbot)
        tab = _models_tab(window, "config.yaml (global")
        assert tab.select("local")
        tab.form.fetch_button.click()
        menu = await until(lambda: tab.models_menu, 20, "the list of models")
        offered = {a.text(): a for a in menu.actions()}
        assert list(offered) == ["alpha", "beta", "gpt-test"]
        assert offered["gpt-test"].isChecked() and not offered["gpt-test"].isEnabled()
        with models.state.lock:
            assert models.state.requests[-1].path == "/v1/models"
        offered["beta"].trigger()
        assert window.file_for(yaml).text.endswith("      models: [gpt-test, beta]\n")
        assert tab.form.models.text() == "gpt-test, beta"
        window.close()
    finally:
        models.set_models(MODELS)  # the module's server is shared


@pytest.mark.parametrize("name", ["config.yaml", "mcp.toml"])
async def test_prices_spend_limit_and_context_length_in_the_form(
    qtbot: QtBot, memory_keyring: MemoryKeyring, name: str
) -> None:
    body = (
        YAML
        if name == "config.yaml"
        else (
            '[models.providers.cloud]\nkind = "openai"\napi_key = "${env:CLOUD_KEY}"\n'
            'models = ["gpt-4.1"]\n'
        )
    )
    path = _write(paths().config_dir / name, body)
    window = await open_editor(qtbot)
    tab = _models_tab(window, f"{name} (global")
    assert tab.select("cloud")
    assert tab.form.prices.text() == "" and tab.form.prices.isEnabled()
    _type(qtbot, tab.form.context_length, "lots")
    await ready(window)  # the check runs in a worker
    error = tab.form.error_text("context_length")
    assert f"{path}:" in error and "models.providers.cloud.context_length" in error
    assert "whole number of tokens" in error
    _type(qtbot, tab.form.context_length, "128000")
    await ready(window)  # the check runs in a worker
    assert tab.form.error_text("context_length") == ""
    _type(qtbot, tab.form.prices, "gpt-4.1 is cheap")
    await ready(window)  # the check runs in a worker
    assert "models.providers.cloud.prices: must map model names to their prices" in (
        tab.form.error_text("prices")
    )
    _type(qtbot, tab.form.prices, "gpt-4.1: 2 / 8, gpt-4.1-mini: 0.4 / 1.6")
    await ready(window)  # the check runs in a worker
    assert tab.form.error_text("prices") == ""
    _type(qtbot, tab.form.spend_limit, "1.5")
    window.save_button.click()
    await saved(window)
    spec = load_files([(path, Scope.GLOBAL)]).models.providers[0]
    assert spec.price("gpt-4.1") == ModelPrice(2, 8)
    assert spec.price("gpt-4.1-mini") == ModelPrice(0.4, 1.6)
    assert (spec.spend_limit, spec.context_length) == (1.5, 128000)
    # shown again as written
    assert tab.select("cloud")
    assert tab.form.prices.text() == "gpt-4.1: 2 / 8, gpt-4.1-mini: 0.4 / 1.6"
    window.close()


async def test_a_value_typed_in_a_provider_is_an_edit_before_focus_leaves(qtbot: QtBot) -> None:
    """Issue 26, item 10, in the Models tab: typed text counts before the field is left."""
    yaml = _write(paths().global_yaml, YAML)
    window = await open_editor(qtbot)
    tab = _models_tab(window, "config.yaml (global")
    assert tab.select("old")
    assert not window.save_button.isEnabled()
    tab.form.base_url.setFocus()
    qtbot.keyClicks(tab.form.base_url, "https://api.example.com")
    assert window.save_button.isEnabled() and window.dirty
    window.close()
    box = window.confirmation
    assert box is not None and box.isVisible() and yaml.name in box.text()
    assert yaml.read_text() == YAML
    box.close()
