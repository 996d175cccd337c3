"""Config editor actions: Store in keychain, Add server (blank, preset, import), Test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from pytestqt.qtbot import QtBot

from portico.auth.secret_store import SecretStore
from portico.config.presets import PRESET_INFO
from portico.runtime.hooks import ConnectionHooks
from portico.ui.editor.form import MappingEditor
from portico.ui.editor.window import NO_RUNTIME
from portico.ui.facade import RuntimeThread
from tests.helpers.keyrings import MemoryKeyring
from tests.ui.editor_helpers import FIXTURES, diff, install_global, open_editor
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

TOOLBOX = Path(__file__).resolve().parents[2] / "servers" / "toolbox.py"


async def test_store_env_value_in_keychain(qtbot: QtBot, memory_keyring: MemoryKeyring) -> None:
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    window.select("github", path)
    env = window.form.fields["env"]
    assert isinstance(env, MappingEditor)
    env.set_entry(1, "SLACK_TOKEN", "xoxb-plain-secret")
    assert 'SLACK_TOKEN = "xoxb-plain-secret"' in window.file_for(path).text
    assert "Plain text in the config file" in env.table.item(1, 1).toolTip()
    env.select_entry("SLACK_TOKEN")
    env.entry_keychain.click()  # the button, as a person would

    await until(lambda: "keyring:github-SLACK_TOKEN" in window.file_for(path).text, 5, "reference")
    assert memory_keyring.items[("portico", "github-SLACK_TOKEN")] == "xoxb-plain-secret"
    text = window.raw_tab(path).toPlainText()
    assert "xoxb-plain-secret" not in text
    assert 'SLACK_TOKEN = "${keyring:github-SLACK_TOKEN}"' in text
    assert env.entries["SLACK_TOKEN"] == "${keyring:github-SLACK_TOKEN}"
    assert env.table.item(1, 1).toolTip() == ""  # a reference: no plain-text warning
    assert "Stored github-SLACK_TOKEN in the keyring" in window.notice.text()
    # A value that is already a reference is not stored again.
    env.select_entry("GITHUB_PERSONAL_ACCESS_TOKEN")
    env.entry_keychain.click()
    await until(lambda: "already holds" in window.notice.text(), 5, "refusal")
    assert len(memory_keyring.items) == 1


async def test_store_client_secret_in_keychain(qtbot: QtBot, memory_keyring: MemoryKeyring) -> None:
    path = install_global("edit_servers.yaml")
    before = path.read_text()
    window = await open_editor(qtbot)
    window.select("docs", path)
    field = window.form.fields["oauth.client_secret"]
    field.editor.setText("s3cret")  # type: ignore[attr-defined]
    field.editor.editingFinished.emit()  # type: ignore[attr-defined]
    assert field.keychain_button is not None
    field.keychain_button.click()
    await until(lambda: "keyring:docs-" in window.file_for(path).text, 5, "reference")
    assert memory_keyring.items[("portico", "docs-client_secret")] == "s3cret"
    await window.save_now()
    assert diff(before, path.read_text()) == [
        "+    oauth:",
        '+      client_secret: "${keyring:docs-client_secret}"',  # quoted by the YAML writer
    ]


@pytest.fixture
def no_secure_keyring() -> Iterator[None]:
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


async def test_store_in_keychain_without_a_secure_keyring_refuses_and_writes_nothing(
    qtbot: QtBot, no_secure_keyring: None, allow_logs: object
) -> None:
    allow_logs(r"No secure keyring")  # type: ignore[operator]
    path = install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    window.select("github", path)
    env = window.form.fields["env"]
    assert isinstance(env, MappingEditor)
    env.set_entry(1, "SLACK_TOKEN", "xoxb-plain-secret")
    env.select_entry("SLACK_TOKEN")
    env.entry_keychain.click()
    await until(lambda: "Could not store" in window.notice.text(), 5, "refusal")
    notice = window.notice.text()
    assert "no secure keyring" in notice and "secrets: {file_fallback: true}" in notice
    assert "Stored" not in notice
    text = window.file_for(path).text
    assert "keyring:github-SLACK_TOKEN" not in text  # no reference to a value not kept
    assert 'SLACK_TOKEN = "xoxb-plain-secret"' in text


async def test_store_in_keychain_with_the_file_fallback_says_where(
    qtbot: QtBot, no_secure_keyring: None, portico_home: Path, allow_logs: object
) -> None:
    allow_logs(r"No secure keyring")  # type: ignore[operator]
    path = install_global("edit_servers.toml")
    (portico_home / "config" / "config.yaml").write_text("secrets:\n  file_fallback: true\n")
    window = await open_editor(qtbot)
    window.select("github", path)
    env = window.form.fields["env"]
    assert isinstance(env, MappingEditor)
    env.set_entry(1, "SLACK_TOKEN", "xoxb-plain-secret")
    env.select_entry("SLACK_TOKEN")
    env.entry_keychain.click()
    await until(lambda: "keyring:github-SLACK_TOKEN" in window.file_for(path).text, 5, "ref")
    stored = portico_home / "state" / "secrets" / "github-SLACK_TOKEN.json"
    assert stored.exists() and (stored.stat().st_mode & 0o777) == 0o600
    assert f"Stored github-SLACK_TOKEN in {stored} (mode 0600" in window.notice.text()


async def test_add_from_preset(qtbot: QtBot, project: Path) -> None:
    window = await open_editor(qtbot, project)
    dialog = window.open_add_server()
    assert dialog.isVisible() and not dialog.isModal()
    dialog.tabs.setCurrentIndex(1)
    shown = [dialog.preset_list.item(i).text() for i in range(dialog.preset_list.count())]
    assert any(PRESET_INFO["memory"].description in text for text in shown)
    target = project / ".portico" / "config.yaml"
    dialog.target.setCurrentIndex(dialog.target.findData(str(target)))
    dialog.select_preset("memory")
    assert dialog.preset_name.text() == "memory"
    dialog.add_button.click()
    assert not dialog.isVisible()

    assert ("memory", "project · yaml") in window.server_list.rows()
    assert window.current() is not None and window.current()[1] == "memory"  # type: ignore[index]
    assert window.form.fields["command"].editor.text() == "npx"  # type: ignore[attr-defined]
    await window.save_now()
    text = target.read_text()
    assert "mcp_servers:" in text and "@modelcontextprotocol/server-memory" in text
    # A second server of the same name is refused in the dialog.
    again = window.open_add_server()
    again.tabs.setCurrentIndex(1)
    again.select_preset("memory")
    again.add_button.click()
    assert "already exists" in again.problem.text()
    assert again.isVisible()
    again.close()


async def test_add_from_import_with_preview_and_problems(qtbot: QtBot) -> None:
    install_global("edit_servers.toml")
    window = await open_editor(qtbot)
    dialog = window.open_add_server()
    dialog.tabs.setCurrentIndex(2)
    dialog.import_kind.setCurrentIndex(dialog.import_kind.findData("claude-desktop"))
    dialog.import_path.setText(str(FIXTURES / "claude_desktop_config.json"))
    dialog.preview_button.click()
    await until(lambda: dialog.import_result is not None, 10, "the preview (read in a worker)")
    items = {
        dialog.import_list.item(i).data(0x0100): dialog.import_list.item(i)
        for i in range(dialog.import_list.count())
    }
    assert set(items) == {"filesystem", "github", "weather-api", "legacy-events", "sqlite"}
    # filesystem and github already exist in mcp.toml: offered unticked.
    assert "exists" in items["filesystem"].text()
    report = dialog.import_report.toPlainText()
    # The entry without a command is reported, not dropped silently.
    assert "problem: broken: has neither a command nor a url" in report
    assert "problem: weather.api: renamed to 'weather-api'" in report
    dialog.add_button.click()
    names = [name for name, _badge in window.server_list.rows()]
    assert {"sqlite", "weather-api", "legacy-events"} <= set(names)
    assert names.count("filesystem") == 1 and names.count("github") == 1
    toml = window.file_for(window.files[0].path).text
    assert "[mcp.sqlite]" in toml


async def test_add_blank_stdio(qtbot: QtBot) -> None:
    window = await open_editor(qtbot)
    dialog = window.open_add_server()
    dialog.blank_name.setText("local")
    dialog.blank_target.setText("uvx mcp-server-time --local-timezone UTC")
    dialog.add_button.click()
    text = window.files[0].text
    assert "[mcp.local]" in text
    assert 'command = ["uvx", "mcp-server-time", "--local-timezone", "UTC"]' in text


def policy_hooks() -> ConnectionHooks:
    """Session-like hooks for a test connection (global servers need no trust review)."""
    return ConnectionHooks(lookup_secret=SecretStore().lookup_secret)


async def test_test_button_connects_edited_server_without_saving(
    qtbot: QtBot, runtime: RuntimeThread
) -> None:
    path = install_global("edit_servers.toml")
    saved = path.read_text()
    window = await open_editor(qtbot, runtime=runtime, hooks=policy_hooks)
    window.add_servers(
        str(path), [("box", {"command": sys.executable, "args": [str(TOOLBOX), "stdio"]})]
    )
    assert window.current() == (window.file_for(path), "box")
    window.test_button.click()
    await until(lambda: window.last_test and window.last_test.result is not None, 40, "test")
    dialog = window.last_test
    assert dialog is not None and dialog.result.ok, dialog.view.toPlainText()
    output = dialog.view.toPlainText()
    assert output.startswith("server:    box (stdio, ")
    assert "status:    Running" in output
    assert "info:      toolbox" in output
    for tool in ("echo", "add", "sleep"):
        assert f"  - {tool}\n" in output
    assert "prompts:   1\n  - greet" in output
    assert "resources: 1\n  - toolbox://readme" in output
    assert "timings:   connect " in output
    assert path.read_text() == saved  # nothing was saved


async def test_test_button_shows_the_full_error(
    qtbot: QtBot, runtime: RuntimeThread, tmp_path: Path
) -> None:
    window = await open_editor(qtbot, runtime=runtime, hooks=policy_hooks)
    path = window.files[0].path
    window.add_servers(str(path), [("nothing", {"command": str(tmp_path / "no-such-program")})])
    dialog = await window.test_selected()
    assert dialog is not None and dialog.result is not None
    assert not dialog.result.ok
    output = dialog.view.toPlainText()
    assert "status:    Failed" in output
    assert "error:     " in output and "no-such-program" in output


@pytest.mark.parametrize("with_runtime", [False, True])
async def test_test_button_refuses_without_a_runtime_session(
    qtbot: QtBot, runtime: RuntimeThread, tmp_path: Path, with_runtime: bool
) -> None:
    """No runtime thread, or no session hooks (the app's runtime did not start): Test says
    so in the window and runs nothing (no unreviewed command, no MCP on the GUI loop)."""
    marker = tmp_path / "ran"
    kwargs: dict[str, object] = {"hooks": lambda: None}
    if with_runtime:
        kwargs["runtime"] = runtime  # a runtime, but no session: the hooks are None
    else:
        kwargs["hooks"] = policy_hooks  # hooks, but no runtime thread
    window = await open_editor(qtbot, **kwargs)
    path = window.files[0].path
    script = f"open({str(marker)!r}, 'w').close()"
    window.add_servers(str(path), [("probe", {"command": sys.executable, "args": ["-c", script]})])
    assert window.current() == (window.file_for(path), "probe")
    assert await window.test_selected() is None
    assert window.notice.text() == NO_RUNTIME
    assert "not running" in window.notice.text()
    assert window.last_test is None and window.test_button.isEnabled()
    assert not marker.exists()
