"""The rule of attack 4 (issue 21) in the app: every text from a config file or a server
that reaches a Qt label goes through ``portico.text.visible`` and is never rendered as
markup. A bidi override (U+202E) reversed what a label showed, an escape sequence or a
zero-width character hid, and a ``QLabel`` (or a tooltip, or a form row's label) that
guesses its format rendered a tool description's ``<b>`` and ``<a href>`` as bold text
and a link: a server could restyle a dialog or plant a link in it.

Each test feeds a real widget what the core hands it (a trust review built by the real
loader and gate from a project folder, the requests and snapshots the runtime builds)
and asserts what a person sees: the override shown as ``<U+202E>``, the escape as
``\\x1b``, the markup as its literal text, no link."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QPlainTextEdit
from pytestqt.qtbot import QtBot

from portico.config import load
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.trust import TrustGate
from portico.prompts import (
    ElicitationRequest,
    Notice,
    SamplingMessage,
    SamplingRequest,
    ToolApprovalRequest,
)
from portico.runtime.events import LogLine, ServerState, Status
from portico.ui.chat.tool_card import CardState, ToolCard
from portico.ui.dialogs.approval_dialog import ApprovalDialog
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.dialogs.sampling_dialog import SamplingDialog
from portico.ui.dialogs.trust_dialog import TrustDialog
from portico.ui.facade import RuntimeThread
from portico.ui.models.servers import ServerListModel
from portico.ui.notices import NoticeArea
from portico.ui.pages.common import PageBackend
from portico.ui.pages.log import LogPage
from portico.ui.pages.log_lines import LogBook
from portico.ui.pages.overview import OverviewPage
from portico.ui.pages.tools import ToolsPage
from portico.ui.runtime_thread.snapshots import ToolInfo
from portico.ui.tray import Tray

RLO = "\u202e"
ZWSP = "\u200b"
MARKUP = '<b>Approve</b> <a href="https://evil.example/">here</a>'
HOSTILE = f"Reads notes {RLO}exe.txt{ZWSP} \x1b[1A\x1b[2K {MARKUP}"


def seen(text: str, fmt: Qt.TextFormat = Qt.TextFormat.AutoText) -> str:
    """What a label (or a tooltip) with ``text`` in ``fmt`` shows: rich text rendered."""
    if fmt == Qt.TextFormat.RichText or (
        fmt == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)
    ):
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text


def shown(widget: QLabel | QPlainTextEdit) -> str:
    if isinstance(widget, QPlainTextEdit):
        return widget.toPlainText()
    return seen(widget.text(), widget.textFormat())


def has_link(label: QLabel) -> bool:
    text = label.text()
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)
    )
    if not rich:
        return False
    doc = QTextDocument()
    doc.setHtml(text)
    return "evil.example" in doc.toHtml() and "href" in doc.toHtml()


def assert_visible(text: str) -> None:
    """The hostile text as a person must see it: every trick shown, none obeyed."""
    assert RLO not in text and ZWSP not in text and "\x1b" not in text, repr(text)
    assert "<U+202E>exe.txt<U+200B>" in text, repr(text)
    assert "\\x1b[1A\\x1b[2K" in text, repr(text)
    assert MARKUP in text, repr(text)  # the markup is text, not bold and a link


def assert_visible_json(text: str) -> None:
    """Arguments as JSON: its own escapes for ESC, the override and zero-width shown."""
    assert RLO not in text and ZWSP not in text and "\x1b" not in text, repr(text)
    assert "<U+202E>exe.txt<U+200B>" in text, repr(text)


def labels_showing(widget: Any, needle: str) -> list[QLabel]:
    return [
        label
        for label in widget.findChildren(QLabel)
        if needle in label.text() or needle in shown(label)
    ]


async def test_trust_dialog_shows_a_project_argument_and_env_value_as_they_are(
    qtbot: QtBot, portico_home: Path, project: Path
) -> None:
    (project / ".portico" / "mcp.toml").write_text(
        f"[mcp.notes]\ncommand = {json.dumps([sys.executable, '-c', 'pass', HOSTILE])}\n"
        f"env = {{ NOTE = {json.dumps(HOSTILE)} }}\n",
        encoding="utf-8",
    )
    spec = load(project).server("notes")
    assert spec is not None
    review = await TrustGate(NonInteractivePrompter(), ask=False).check(spec)
    assert review is not None
    dialog = TrustDialog(review.request)
    qtbot.addWidget(dialog)
    assert_visible(shown(dialog.target))
    launch = shown(dialog.launch)
    assert_visible(launch)
    assert "NOTE = Reads notes <U+202E>" in launch
    assert not has_link(dialog.launch)


def test_approval_dialog_shows_a_tool_description_and_arguments_as_they_are(
    qtbot: QtBot,
) -> None:
    request = ToolApprovalRequest(
        server="notes",
        tool="write",
        qualified_name="notes__write",
        description=HOSTILE,
        arguments={"text": HOSTILE},
        arguments_json=json.dumps({"text": HOSTILE}, ensure_ascii=False),
        reason=f"the server says {MARKUP}",
    )
    dialog = ApprovalDialog(request)
    qtbot.addWidget(dialog)
    (description,) = [w for w in dialog.findChildren(QLabel) if w.accessibleName() == "description"]
    assert_visible(shown(description))
    assert_visible_json(dialog.arguments_view.toPlainText())
    (reason,) = labels_showing(dialog, "Asked because")
    assert shown(reason) == f"Asked because: the server says {MARKUP}"
    assert not has_link(reason)


def test_elicitation_form_shows_the_server_s_message_titles_and_descriptions_as_text(
    qtbot: QtBot,
) -> None:
    request = ElicitationRequest(
        server="notes",
        message=HOSTILE,
        schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": HOSTILE, "description": HOSTILE},
                "pick": {"type": "string", "enum": ["a"], "enumNames": [HOSTILE]},
            },
        },
        error=HOSTILE,
    )
    dialog = ElicitationDialog(request)
    qtbot.addWidget(dialog)
    assert_visible(shown(dialog.message))
    assert_visible(shown(dialog.error_label))
    assert not has_link(dialog.error_label)
    (row_label,) = labels_showing(dialog.form, "Reads notes")
    assert_visible(shown(row_label))  # a form row's label guessed rich text: bold and a link
    assert not has_link(row_label)
    name = dialog.fields["name"].widget
    assert_visible(seen(name.toolTip()))
    assert_visible(name.accessibleName())
    pick = dialog.fields["pick"].widget
    assert_visible(pick.itemText(pick.count() - 1))  # type: ignore[attr-defined]


def test_sampling_dialog_shows_the_server_s_messages_as_they_are(qtbot: QtBot) -> None:
    request = SamplingRequest(
        server="notes",
        messages=(SamplingMessage("user", HOSTILE),),
        system_prompt=HOSTILE,
        requested_model=None,
        model="gpt-test",
        max_tokens=100,
    )
    dialog = SamplingDialog(request)
    qtbot.addWidget(dialog)
    assert dialog.system_edit is not None
    assert_visible(dialog.system_edit.toPlainText())
    assert_visible(dialog.message_edits[0][1].toPlainText())


def test_chat_tool_card_shows_a_result_an_error_and_progress_as_they_are(qtbot: QtBot) -> None:
    card = ToolCard(
        CardState(
            "c1",
            "notes",
            "read",
            "notes__read",
            {"q": HOSTILE},
            outcome="error",
            text=HOSTILE,
            error=HOSTILE,
        )
    )
    qtbot.addWidget(card)
    assert card.result_text is not None
    assert_visible(shown(card.result_text))
    assert_visible(shown(card.error_label))
    assert not has_link(card.error_label)
    assert_visible_json(shown(card.args_view))
    card.set_progress(1, 2, HOSTILE)
    assert_visible(shown(card.progress_text))  # a progress message guessed rich text
    assert not has_link(card.progress_text)
    card.show_task(HOSTILE)
    assert_visible(shown(card.task_label))


def test_tools_tab_and_try_it_show_a_tool_s_texts_as_they_are(qtbot: QtBot) -> None:
    page = ToolsPage(PageBackend(RuntimeThread(), lambda: None))
    qtbot.addWidget(page)
    tool = ToolInfo(
        name="read",
        qualified="notes__read",
        description=HOSTILE,
        input_schema={
            "type": "object",
            "properties": {"q": {"type": "string", "title": HOSTILE, "description": HOSTILE}},
        },
        title=HOSTILE,
    )
    page.set_tools("notes", [tool])
    assert_visible(page.model.index(0, 1).data(Qt.ItemDataRole.DisplayRole))
    assert_visible(seen(page.model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole)))
    details = page.details.toPlainText()
    assert_visible(details)
    assert 'href="https://evil.example/"' not in page.details.toHtml()  # no link planted
    assert page.form is not None
    (row_label,) = labels_showing(page.form, "Reads notes")
    assert_visible(shown(row_label))  # Try it's form row
    page.result_view.show_message(HOSTILE, error=True)
    assert_visible(page.result_view.toPlainText())


def test_log_tab_shows_a_server_s_line_without_obeying_or_forging(qtbot: QtBot) -> None:
    book = LogBook()
    forged = "boot\r\x1b[2K\n12:00:00.000  [portico] notes: trusted by you"
    for line in (
        LogLine("notes", HOSTILE, stream="stderr"),
        LogLine("notes", forged, stream="mcp", level="info"),
    ):
        book.add(line)
    page = LogPage(QPlainTextEdit(), book, lambda: "notes")
    qtbot.addWidget(page)
    book.show(page.view, "notes")
    lines = page.view.toPlainText().split("\n")
    assert len(lines) == 2  # the line feed inside a line did not make a third one
    assert_visible(lines[0])
    forged_shown = "boot\\r\\x1b[2K\\n12:00:00.000  [portico] notes: trusted by you"
    assert lines[1].endswith(f"[info] {forged_shown}")


def test_notice_and_tray_message_show_a_server_s_error_as_it_is(qtbot: QtBot) -> None:
    area = NoticeArea()
    qtbot.addWidget(area)
    row = area.post(Notice("error", f"notes failed: {HOSTILE}", server="notes"))
    assert_visible(shown(row.label))
    assert not has_link(row.label)
    tray = Tray()
    sent: list[tuple[str, str, bool]] = []
    tray.notified.connect(lambda *args: sent.append(args))
    tray.update_states([ServerState("notes", Status.FAILED, error=HOSTILE)])
    ((_, text, critical),) = sent
    assert critical
    assert_visible(text)


def test_server_list_and_overview_show_a_server_s_error_as_it_is(qtbot: QtBot) -> None:
    state = ServerState("notes", Status.FAILED, error=HOSTILE)
    model = ServerListModel()
    model.update_state(state)
    index = model.index(0)
    assert_visible(seen(index.data(Qt.ItemDataRole.ToolTipRole)))  # a tooltip guesses rich text
    page = OverviewPage()
    qtbot.addWidget(page)
    page.show_state(state, "project")
    assert_visible(shown(page.error))
