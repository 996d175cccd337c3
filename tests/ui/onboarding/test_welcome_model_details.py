"""Connect a model's list of local servers shows, for the model chosen in each, what the
server said of it (size, context, tool calls), and says so before a model that takes no
tool calls is picked; read from small servers on 127.0.0.1 speaking Ollama's and
llama.cpp's APIs in their real shapes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.chat.detect import detect_local, probes
from portico.ui.onboarding.model_flow import ModelFlow
from tests.servers.local_models import LocalServer, llamacpp_app, ollama_app


async def test_the_chosen_models_size_context_and_tool_calls_are_shown(qtbot: QtBot) -> None:
    with LocalServer(ollama_app) as ollama, LocalServer(llamacpp_app) as llamacpp:
        found = await detect_local(probes([ollama.port, llamacpp.port]))
    flow = ModelFlow()
    qtbot.addWidget(flow)
    flow.show()
    flow.set_detected(found)
    models, other = flow.local_models
    about, other_about = flow.local_details
    assert [models.itemText(i) for i in range(models.count())] == ["gemma2:2b", "qwen3:8b"]
    assert about.isVisible() and about.accessibleName().endswith("model details")
    assert about.text() == (
        "1.6 GB · context 8,192 tokens · no tool calls (chat only): it can answer, but not "
        "use your servers' tools"
    )
    models.setCurrentIndex(1)
    assert about.text() == "5.2 GB · context 40,960 tokens · tool calls"
    assert models.itemData(0, Qt.ItemDataRole.ToolTipRole).startswith("1.6 GB")
    assert other_about.text() == "2.0 GB · context 4,096 tokens · tool calls: unknown"
    assert other.currentText() == "Llama-3.2-3B-Instruct-Q4_K_M.gguf"
