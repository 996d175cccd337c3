"""Render the config editor offscreen to PNG files (form view, raw view with a marker,
Add server and the Models tab).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/editor_screenshot.py [OUT_DIR]

Uses a throwaway PORTICO_HOME filled from tests/config/corpus; OUT_DIR defaults to
docs/screenshots/ (like tests/ui/screenshots.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "config" / "corpus"


def render(out: Path) -> list[Path]:
    home = Path(tempfile.mkdtemp(prefix="portico-shot-"))
    os.environ["PORTICO_HOME"] = str(home)
    from portico import paths
    from portico.ui.editor.window import ConfigEditorWindow
    from portico.ui.loop import ensure_application

    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    p = paths.paths()
    p.global_toml.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / "edit_servers.toml", p.global_toml)
    project = home / "site"
    (project / ".portico").mkdir(parents=True)
    shutil.copyfile(CORPUS / "edit_servers.yaml", project / ".portico" / "config.yaml")
    out.mkdir(parents=True, exist_ok=True)
    import asyncio

    from portico.ui.loop import PorticoEventLoop

    loop = PorticoEventLoop(app)

    async def opened() -> ConfigEditorWindow:
        editor = ConfigEditorWindow(project)  # it reads its files in a worker
        while editor.reading or editor.ops.running:  # noqa: ASYNC110 (a script, no helper)
            await asyncio.sleep(0.01)
        return editor

    window = loop.run_until_complete(opened())
    window.resize(1180, 820)
    window.show()
    window.select("docs", p.global_toml)
    port = window.form.fields["oauth.callback_port"].editor
    port.setText("99999")  # type: ignore[attr-defined]
    port.editingFinished.emit()  # type: ignore[attr-defined]
    for group in ("Costs and spend", "Trust and approvals", "Sampling", "Elicitation"):
        window.form.sections[group].set_expanded(False)
    app.processEvents()
    window.form.ensureWidgetVisible(window.form.fields["oauth.client_secret"], 50, 200)
    app.processEvents()
    written = []
    form_png = out / "config-editor.png"
    window.grab().save(str(form_png))
    written.append(form_png)
    window.tabs.setCurrentWidget(window.raw_tab(p.global_toml))
    app.processEvents()
    raw_png = out / "config-editor-raw.png"
    window.grab().save(str(raw_png))
    written.append(raw_png)
    dialog = window.open_add_server()
    dialog.resize(640, 520)
    dialog.tabs.setCurrentIndex(2)
    dialog.import_path.setText(
        str(REPO / "tests/config/import_fixtures/claude_desktop_config.json")
    )

    async def previewed() -> None:
        await dialog.preview_import()  # read in a worker

    loop.run_until_complete(previewed())
    app.processEvents()
    add_png = out / "config-editor-add-server.png"
    dialog.grab().save(str(add_png))
    written.append(add_png)
    dialog.close()
    tab = window.models
    tab.choose_file(window.file_for(p.global_yaml))
    tab.add_provider(
        "openai",
        {"kind": "openai", "api_key": "${keyring:openai-api-key}", "models": ["gpt-4.1"]},
    )
    tab.add_provider(
        "ollama", {"kind": "openai", "base_url": "http://127.0.0.1:11434/v1", "models": ["qwen3"]}
    )
    tab.default_combo.setCurrentIndex(tab.default_combo.findData("openai/gpt-4.1"))
    tab.default_combo.activated.emit(tab.default_combo.currentIndex())
    window.tabs.setCurrentWidget(tab)
    window.models.select("ollama")
    app.processEvents()
    models_png = out / "config-editor-models.png"
    window.grab().save(str(models_png))
    written.append(models_png)
    window.close()
    loop.close()
    shutil.rmtree(home, ignore_errors=True)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"
    for path in render(target):
        print(path)
