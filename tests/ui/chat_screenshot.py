"""Render the chat pane and the welcome offscreen to PNG files for the README.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/chat_screenshot.py [OUT_DIR]

Writes welcome.png, chat-tool-card.png, chat-approval.png, chat-search.png and
chat-model-picker.png (OUT_DIR defaults to docs/screenshots/).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication

from portico.chat.messages import Message, Round, ToolCall
from portico.prompts import ToolApprovalRequest
from portico.runtime.events import ServerState, Status
from portico.ui.chat.conversation_list import ConversationRow
from portico.ui.chat.tool_card import CardState
from portico.ui.loop import ensure_application
from portico.ui.main_window import MainWindow
from portico.ui.onboarding.setup import FoundImport
from portico.ui.onboarding.welcome import WelcomePage

REPO = Path(__file__).resolve().parents[2]

ANSWER = """Here is the quarter at a glance:

| month | revenue | change |
|---|---|---|
| July | 41.2k | +4% |
| August | 44.0k | +7% |
| September | 47.9k | +9% |

The chart above comes from `charts__render`. To redo it yourself:

```python
import matplotlib.pyplot as plt
plt.plot(["Jul", "Aug", "Sep"], [41.2, 44.0, 47.9])
```
"""


def _chart() -> bytes:
    image = QImage(360, 180, QImage.Format.Format_RGB32)
    image.fill(QColor("#f7f9fc"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    for i, h in enumerate((82, 96, 120)):
        painter.fillRect(60 + i * 100, 160 - h, 60, h, QColor("#3b7dd8"))
    painter.setPen(QColor("#333"))
    painter.drawText(20, 24, "Revenue by month (k)")
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def _window() -> MainWindow:
    window = MainWindow()
    for state in (
        ServerState("files", Status.RUNNING, tool_count=11),
        ServerState("charts", Status.RUNNING, tool_count=4),
        ServerState("github", Status.RUNNING, tool_count=26),
        ServerState("linear", Status.NEEDS_AUTH, error="the refresh token was revoked"),
    ):
        window.model.update_state(state)
    pane = window.chats.pane
    pane.set_states(window.model.states())
    now = time.time()
    window.chats.conversations.set_rows(
        [
            ConversationRow("q3", "Q3 revenue report", now - 60),
            ConversationRow("trip", "Lisbon trip plan", now - 3600 * 3),
            ConversationRow("bugs", "Triage open GitHub issues", now - 86400),
            ConversationRow("notes", "Meeting notes cleanup", now - 86400 * 3),
            ConversationRow("db", "Migrate the sqlite schema", now - 86400 * 12),
        ],
        "q3",
    )
    pane.title.setText("Q3 revenue report")
    pane.composer.set_models(
        [
            ("ollama/llama3.2", "ollama / llama3.2"),
            ("openai/gpt-4.1-mini", "openai / gpt-4.1-mini (vision)"),
            ("anthropic/claude-sonnet-4-5", "anthropic / claude-sonnet-4-5 (vision)"),
        ],
        "openai/gpt-4.1-mini",
    )
    pane.set_usage(2_184, 412, 6_930, 1_215)
    pane.set_spend({"charts": 14.0}, {"charts": (100.0, "credits")})
    window.resize(1180, 760)
    return window


def _chat(window: MainWindow, *, approval: bool) -> None:
    call = ToolCall(
        id="c1",
        name="charts__render",
        arguments={"kind": "bar", "series": [41.2, 44.0, 47.9]},
        outcome="ok",
        result_text="Rendered a bar chart (360x180).",
        duration=1.4,
    )
    messages = [
        Message(id="u1", role="user", text="Chart our Q3 revenue and sum it up in a table."),
        Message(
            id="a1",
            role="assistant",
            model="openai/gpt-4.1-mini",
            text=ANSWER,
            tool_calls=[call],
            rounds=[Round("I'll render the chart first.", ["c1"]), Round(ANSWER, [])],
        ),
    ]
    view = window.chats.pane.transcript
    view.set_messages(messages, {})
    card = view.widgets["a1"].cards["c1"]
    state = card.state
    state.text = "Rendered a bar chart (360x180)."
    state.images = [("chart.png", _chart())]
    card.finish(state)
    if approval:
        view.add_message(Message(id="u2", role="user", text="Now save it as reports/q3.png."))
        live = view.add_message(Message(id="a2", role="assistant", model="openai/gpt-4.1-mini"))
        live.stream_text("Saving the chart to your files.")
        card = live.add_card(
            CardState(
                "c2",
                "files",
                "write_file",
                "files__write_file",
                {"path": "reports/q3.png", "overwrite": False},
            )
        )
        card.ask(
            ToolApprovalRequest(
                server="files",
                tool="write_file",
                qualified_name="files__write_file",
                description="Create or overwrite a file.",
                arguments={"path": "reports/q3.png"},
                arguments_json='{"path": "reports/q3.png"}',
                reason="the tool is not marked read-only",
            )
        )
        window.chats.pane.composer.set_running(True, "Answering… (Esc stops)")


def _save(widget, out: Path, name: str) -> Path:  # type: ignore[no-untyped-def]
    app = QApplication.instance()
    for _ in range(5):
        app.processEvents()  # type: ignore[union-attr]
    widget.chats.pane.transcript.scroll_to_bottom() if hasattr(widget, "chats") else None
    app.processEvents()  # type: ignore[union-attr]
    path = out / name
    if not widget.grab().save(str(path)):
        raise RuntimeError(f"could not write {path}")
    return path


def render(out: Path) -> list[Path]:
    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    window = _window()
    welcome = WelcomePage()
    welcome.set_imports(
        [
            FoundImport("claude-desktop", "Claude Desktop", Path("~/.config/Claude/x.json"), 5),
            FoundImport("vscode", "VS Code", Path("~/.config/Code/User/mcp.json"), 3),
        ]
    )
    window.chats.pane.show_welcome(welcome)
    window.chats.conversations.set_rows([])
    window.chats.pane.set_states([])
    window.chats.pane.composer.set_models([], None)
    window.chats.pane.usage.setText("")
    window.chats.pane.set_spend({}, {})
    window.show()
    written.append(_save(window, out, "welcome.png"))
    window.close()

    window = _window()
    _chat(window, approval=False)
    window.show()
    written.append(_save(window, out, "chat-tool-card.png"))
    window.close()

    window = _window()
    _chat(window, approval=True)
    window.show()
    written.append(_save(window, out, "chat-approval.png"))
    window.close()

    window = _window()
    _chat(window, approval=False)
    lst = window.chats.conversations
    lst.search.setText("revenue")
    now = time.time()
    lst.set_rows(
        [
            ConversationRow(
                "q3", "Q3 revenue report", now - 60, "…sum up our Q3 [revenue] in a table…"
            ),
            ConversationRow(
                "q2", "Q2 board deck", now - 86400 * 40, "…[revenue] grew 12% over Q1…"
            ),
        ],
        "q3",
    )
    window.show()
    written.append(_save(window, out, "chat-search.png"))
    window.close()

    window = _window()
    _chat(window, approval=False)
    composer = window.chats.pane.composer
    composer.yolo.setChecked(True)
    window.show()
    app.processEvents()
    composer.model_picker.showPopup()
    app.processEvents()
    base = window.grab().toImage()
    popup = composer.model_picker.view().window()
    shot = popup.grab().toImage()
    painter = QPainter(base)
    at = composer.model_picker.mapTo(window, composer.model_picker.rect().topLeft())
    painter.drawImage(at.x(), at.y() - shot.height(), shot)
    painter.end()
    path = out / "chat-model-picker.png"
    base.save(str(path))
    written.append(path)
    composer.model_picker.hidePopup()
    window.close()
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"
    for written_path in render(target):
        print(written_path)
    sys.exit(0)
_ = Qt
