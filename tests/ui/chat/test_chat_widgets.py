"""The chat pane's widgets as a person meets them: Markdown, the composer's keys and
completions, the conversation list, tool cards with inline approvals, the transcript's
follow-bottom and coalesced streaming."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QMimeData, QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QToolButton
from pytestqt.qtbot import QtBot

from portico.chat.messages import Message, ToolCall
from portico.prompts import ApprovalAnswer, ApprovalChoice, ToolApprovalRequest
from portico.ui.chat.completion import Completion
from portico.ui.chat.composer import Composer
from portico.ui.chat.conversation_list import ConversationList, ConversationRow
from portico.ui.chat.markdown_view import CodeBlockWidget, MarkdownView, RichLabel
from portico.ui.chat.message_widget import MessageWidget
from portico.ui.chat.tool_card import CardState, ToolCard
from portico.ui.chat.transcript import TranscriptView
from tests.ui.chat_helpers import make_active
from tests.ui.qt_helpers import windows_shown

ANSWER = """# Plan

Read **this** with `inline code` and [the docs](https://example.com/docs).

- one
- two

| a | b |
|---|---|
| 1 | 2 |

```python
def f():
    return 42
```
"""


def _png(width: int = 64, height: int = 48) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.darkCyan)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


class _Opened(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url.toString())


def test_markdown_renders_what_a_reader_expects(qtbot: QtBot) -> None:
    view = MarkdownView(ANSWER)
    qtbot.addWidget(view)
    widgets = view.widgets()
    html = "".join(w.text() for w in widgets if isinstance(w, RichLabel))
    assert "<h1>Plan</h1>" in html
    assert "<strong>this</strong>" in html and "inline code</code>" in html
    assert "<li>one</li>" in html and "<table" in html and "<td>2</td>" in html
    code = [w for w in widgets if isinstance(w, CodeBlockWidget)]
    assert len(code) == 1 and code[0].language.text() == "python"
    assert "color" in code[0].code.text()  # highlighted by Pygments
    qtbot.mouseClick(code[0].copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "def f():\n    return 42\n"
    assert code[0].copy_button.text() == "Copied"


def test_links_open_in_the_system_browser_and_never_other_schemes(qtbot: QtBot) -> None:
    view = MarkdownView("See [docs](https://example.com/docs) or [this](file:///etc/passwd).")
    qtbot.addWidget(view)
    label = view.widgets()[0]
    assert isinstance(label, RichLabel)
    assert label.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByKeyboard
    opened = _Opened()
    QDesktopServices.setUrlHandler("https", opened, "open")
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        label.linkActivated.emit("https://example.com/docs")
        label.linkActivated.emit("file:///etc/passwd")
    finally:
        QDesktopServices.unsetUrlHandler("https")
        QDesktopServices.unsetUrlHandler("file")
    assert opened.urls == ["https://example.com/docs"]


def test_streaming_rerenders_only_the_tail(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    text = ""
    for word in ANSWER.split(" "):
        text += word + " "
        view.stream(text)
    first = view.widgets()[0]
    view.stream(text + "\n\nMore at the end.")
    assert view.widgets()[0] is first  # the heading was frozen, not rebuilt
    assert view.widgets()[-1].text() == "<p>More at the end.</p>"


def test_composer_keys(qtbot: QtBot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    sent: list[str] = []
    stops: list[bool] = []
    composer.submitted.connect(lambda text, _att: sent.append(text))
    composer.stopRequested.connect(lambda: stops.append(True))
    field = composer.input
    qtbot.keyClicks(field, "first line")
    qtbot.keyClick(field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(field, "second")
    assert field.toPlainText() == "first line\nsecond"
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert sent == ["first line\nsecond"] and field.toPlainText() == ""
    qtbot.keyClicks(field, "again")
    qtbot.keyClick(field, Qt.Key.Key_Enter)
    qtbot.keyClick(field, Qt.Key.Key_Up)
    assert field.toPlainText() == "again"
    qtbot.keyClick(field, Qt.Key.Key_Up)
    assert field.toPlainText() == "first line\nsecond"
    qtbot.keyClick(field, Qt.Key.Key_Down)
    qtbot.keyClick(field, Qt.Key.Key_Down)
    assert field.toPlainText() == ""
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert stops == []  # nothing runs: Esc does nothing
    composer.set_running(True)
    assert composer.stop_button.isVisible() and not composer.send_button.isVisible()
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert stops == [True]
    qtbot.mouseClick(composer.stop_button, Qt.MouseButton.LeftButton)
    assert stops == [True, True]


def test_yolo_shows_a_warning_and_the_model_picker_lists_models(qtbot: QtBot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.set_models(
        [("local/llama", "local / llama"), ("cloud/big", "cloud / big")], "cloud/big"
    )
    assert composer.model_picker.currentText() == "cloud / big"
    assert not composer.yolo_warning.isVisible()
    composer.yolo.click()
    assert composer.yolo_warning.isVisible()
    assert "without asking" in composer.yolo_warning.text()
    composer.set_models([], None)
    assert composer.model_picker.currentText() == "No model (direct mode)"


def test_completion_popup_inserts_the_choice(qtbot: QtBot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    asked: list[tuple[str, str]] = []

    def source(trigger: str, word: str) -> list[Completion]:
        asked.append((trigger, word))
        if trigger == "/":
            return [
                Completion("/help ", "/help", "list the commands"),
                Completion("/everything:simple-prompt ", "/everything:simple-prompt", ""),
                Completion(
                    "/everything:complex_prompt ",
                    "/everything:complex_prompt",
                    "temperature (required), style",
                ),
            ]
        if trigger == "@":
            return [
                Completion(
                    "@everything:test://static/resource/1 ", "@everything:test://static/resource/1"
                )
            ]
        return [Completion("everything__echo ", "everything__echo", "Echo back")]

    composer.source = source
    field = composer.input
    qtbot.keyClicks(field, "/comp")
    assert composer.popup.isVisible()
    assert [r.label for r in composer.popup.rows()] == ["/everything:complex_prompt"]
    assert "temperature (required)" in composer.popup.view.currentIndex().data()
    qtbot.keyClick(field, Qt.Key.Key_Return)  # picks, does not send
    assert field.toPlainText() == "/everything:complex_prompt "
    assert not composer.popup.isVisible()
    field.clear()
    qtbot.keyClicks(field, "read @every")
    assert ("@", "every") in asked and composer.popup.isVisible()
    qtbot.keyClick(field, Qt.Key.Key_Tab)
    assert field.toPlainText() == "read @everything:test://static/resource/1 "
    field.clear()
    qtbot.keyClicks(field, "/call ec")
    assert ("call", "ec") in asked
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert field.toPlainText() == "/call everything__echo "


def test_pasted_image_and_files_become_attachments(qtbot: QtBot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    composer = Composer()
    qtbot.addWidget(composer)
    mime = QMimeData()
    mime.setImageData(QImage.fromData(_png()))
    composer.input.insertFromMimeData(mime)
    note = tmp_path / "notes.txt"
    note.write_text("hi")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(note))])
    composer.input.insertFromMimeData(files)
    kinds = [(a.kind, a.name) for a in composer.attachments]
    assert kinds == [("image", "pasted image.png"), ("file", "notes.txt")]
    assert composer.attachments[0].data.startswith(b"\x89PNG")
    assert composer.attachments[1].path == str(note)
    chips = [
        w
        for w in composer.findChildren(QObject)
        if getattr(w, "accessibleName", None)
        and str(w.accessibleName()).startswith("Remove attachment")
    ]
    assert len(chips) == 2
    chips[0].click()  # type: ignore[attr-defined]
    assert [a.name for a in composer.attachments] == ["notes.txt"]


def test_files_dropped_on_the_composer_become_chips(qtbot: QtBot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent

    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4")
    note = tmp_path / "todo.md"
    note.write_text("- [ ] ship")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(report)), QUrl.fromLocalFile(str(note))])
    viewport = composer.input.viewport()
    at = QPointF(viewport.rect().center())
    copy = Qt.DropAction.CopyAction
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(at.toPoint(), copy, mime, buttons, keys)
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(viewport, QDragMoveEvent(at.toPoint(), copy, mime, buttons, keys))
    drop = QDropEvent(at, copy, mime, buttons, keys)
    QApplication.sendEvent(viewport, drop)
    assert [(a.kind, a.name, a.path) for a in composer.attachments] == [
        ("file", "report.pdf", str(report)),
        ("file", "todo.md", str(note)),
    ]
    assert composer.input.toPlainText() == ""  # the paths are not typed into the message
    chips = [w.text() for w in composer.findChildren(QToolButton) if "✕" in w.text()]
    assert chips == ["📄 report.pdf  ✕", "📄 todo.md  ✕"]


def test_chips_say_size_and_when_the_model_takes_no_images(qtbot: QtBot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    composer = Composer()
    qtbot.addWidget(composer)
    composer.set_models(
        [("blind/gpt", "blind/gpt"), ("seeing/v", "seeing/v (vision)")], "blind/gpt", {"seeing/v"}
    )
    mime = QMimeData()
    mime.setImageData(QImage.fromData(_png()))
    composer.input.insertFromMimeData(mime)
    [chip] = [
        w
        for w in composer.findChildren(QToolButton)
        if w.accessibleName() == "Remove attachment pasted image.png"
    ]
    size = len(composer.attachments[0].data)
    assert chip.text() == f"🖼 pasted image.png ({size} B) — this model takes no images  ✕"
    composer.model_picker.setCurrentIndex(1)
    composer.model_picker.activated.emit(1)
    assert chip.text() == f"🖼 pasted image.png ({size} B)  ✕"
    # the attach button opens the file dialog without blocking; choosing adds chips
    note = tmp_path / "plan.md"
    note.write_text("x")
    button = composer.attach_button
    assert button.accessibleName() == "Attach files"
    dialog = composer.choose_files()
    assert dialog.isVisible()  # open() returned at once: the loop runs on
    dialog.filesSelected.emit([str(note)])
    dialog.reject()
    assert [a.name for a in composer.attachments] == ["pasted image.png", "plan.md"]
    assert any(w.text() == "📄 plan.md  ✕" for w in composer.findChildren(QToolButton))


def test_conversation_list_groups_by_day_and_searches_after_a_pause(qtbot: QtBot) -> None:
    chats = ConversationList()
    qtbot.addWidget(chats)
    now = time.time()
    chats.set_rows(
        [
            ConversationRow("a", "Trip plan", now),
            ConversationRow("b", "Budget", now - 86400),
            ConversationRow("c", "Old notes", now - 86400 * 40),
        ]
    )
    assert chats.headers()[:2] == ["Today", "Yesterday"]
    assert chats.ids() == ["a", "b", "c"]
    with qtbot.waitSignal(chats.searchChanged, timeout=2000) as signal:
        qtbot.keyClicks(chats.search, "bud")
    assert signal.args == ["bud"]
    selected: list[str] = []
    chats.selected.connect(selected.append)
    chats.list.setFocus()
    chats.list.setCurrentRow(1)  # the row under "Today"
    assert selected == ["a"]
    deleted: list[str] = []
    chats.deleteRequested.connect(deleted.append)
    qtbot.keyClick(chats.list, Qt.Key.Key_Delete)
    assert deleted == ["a"]
    renamed: list[tuple[str, str]] = []
    chats.renameRequested.connect(lambda cid, title: renamed.append((cid, title)))
    qtbot.keyClick(chats.list, Qt.Key.Key_F2)
    dialog = chats.rename_dialog
    dialog.setTextValue("Trip to Lisbon")
    dialog.accept()
    assert renamed == [("a", "Trip to Lisbon")]


def _request() -> ToolApprovalRequest:
    return ToolApprovalRequest(
        server="files",
        tool="write_file",
        qualified_name="files__write_file",
        description="Write a file",
        arguments={"path": "a.txt"},
        arguments_json='{\n  "path": "a.txt"\n}',
        reason="the tool is not marked read-only",
    )


def test_an_approval_with_details_flashes_no_window(qtbot: QtBot) -> None:
    card = ToolCard(CardState("c1", "files", "write_file", "files__write_file", {"path": "a.txt"}))
    qtbot.addWidget(card)
    card.show()
    with windows_shown() as shown:
        panel = card.ask(_request())  # its details name the reason
    assert shown == []
    assert panel.details.isVisible() and "not marked read-only" in panel.details.text()


def test_a_result_shown_again_without_text_leaves_no_dead_label_for_find(qtbot: QtBot) -> None:
    """A card's result can be replaced (a task's fetched result, a stop): the old label is
    deleted, and find must not reach it (it raised "Internal C++ object already deleted")."""
    card = ToolCard(CardState("c1", "srv", "t", "srv__t", {}))
    qtbot.addWidget(card)
    state = card.state
    state.outcome, state.text = "ok", "a needle"
    card.finish(state)
    assert card.mark("needle", 0, 0) == 1
    state.text = ""
    card.finish(state)
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the old label goes
    assert card.result_text is None
    assert card.mark("needle", 0, 0) == 0


def test_tool_card_inline_approval_progress_and_result(qtbot: QtBot) -> None:
    card = ToolCard(CardState("c1", "files", "write_file", "files__write_file", {"path": "a.txt"}))
    qtbot.addWidget(card)
    card.show()
    assert card.cancel_button.isVisible() and card.status.text() == "Running"
    assert not card.args_view.isVisible()
    card.args_button.click()
    assert card.args_view.isVisible() and '"path": "a.txt"' in card.args_view.text()
    answers: list[object] = []
    card.approvalAnswered.connect(lambda _id, answer: answers.append(answer))
    panel = card.ask(_request())
    assert card.status.text() == "Waiting for you"
    assert [b.accessibleName() for b in panel.buttons.values()] == [
        "Allow Once",
        "Allow for Session",
        "Always Allow",
        "Deny",
    ]
    assert all(not b.autoDefault() for b in panel.buttons.values())
    assert panel.any_arguments is not None
    panel.any_arguments.setChecked(True)
    panel.buttons[ApprovalChoice.SESSION].click()
    assert answers == [ApprovalAnswer(ApprovalChoice.SESSION, any_arguments=True)]
    card.approval_settled("session", "")
    card.set_progress(3, 10, "writing")
    assert card.progress.isVisible() and card.progress.value() == 300
    assert card.progress_text.text() == "writing"
    state = card.state
    state.outcome, state.text, state.duration = "ok", "wrote 12 bytes", 1.25
    state.images.append(("chart.png", _png(600, 300)))
    state.links.append(("report", "https://example.com/r"))
    card.finish(state)
    assert card.status.text() == "Done" and not card.cancel_button.isVisible()
    assert card.result_text is not None and card.result_text.text() == "wrote 12 bytes"
    assert len(card.thumbs) == 1 and card.thumbs[0].pixmap().width() == 240
    dialog = card.thumbs[0].enlarge()
    qtbot.addWidget(dialog)
    assert dialog.isVisible() and dialog.windowTitle() == "chart.png"
    assert card.elapsed.text() == "1.2 s" or card.elapsed.text() == "1.3 s"


def test_a_denial_reads_as_the_persons_decision(qtbot: QtBot) -> None:
    state = CardState(
        "c2",
        "files",
        "delete",
        "files__delete",
        outcome="denied",
        error="You denied files__delete.",
    )
    card = ToolCard(state)
    qtbot.addWidget(card)
    assert card.status.text() == "You denied this call"
    assert "failed" not in card.status.text().lower()


def test_a_live_card_and_its_approval_are_shown_at_once(qtbot: QtBot) -> None:
    # A turn's events can arrive in one batch: the answer, its card and the approval are
    # built, and Deny takes the focus, before Qt delivers a posted event. Left to the
    # layout's queued show, they stay hidden meanwhile: Shift+Tab from Deny skipped the
    # other choices, and a scroll to the card measured a widget not yet laid out.
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    make_active(view)
    view.add_message(Message(id="q", role="user", text="write it"))
    qtbot.waitUntil(lambda: view.widgets["q"].isVisible())
    answer = view.add_message(Message(id="a", role="assistant"))
    assert answer.isVisible()
    card = answer.add_card(CardState("c1", "files", "write_file", "files__write_file"))
    assert card.isVisible()
    panel = card.ask(_request())
    assert all(button.isVisible() for button in panel.buttons.values())
    panel.deny_button.setFocus()
    QTest.keyClick(panel.deny_button, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is panel.buttons[ApprovalChoice.ALWAYS]
    notice = QLabel("a notice")
    view.add_widget(notice)
    assert notice.isVisible()
    with windows_shown() as shown:  # a stored message's cards show with it, not before
        stored = MessageWidget(
            Message(id="b", role="assistant", tool_calls=[ToolCall("c2", "files__write_file")])
        )
    qtbot.addWidget(stored)
    assert shown == [] and not stored.cards["c2"].isVisible()


def test_transcript_follows_the_bottom_until_scrolled_up(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    messages = [
        Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant", text=f"Message {i}\n\n" * 4)
        for i in range(60)
    ]
    view.set_messages(messages, {})
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0)
    qtbot.waitUntil(lambda: view.verticalScrollBar().value() == view.verticalScrollBar().maximum())
    assert len(view.widgets) == 24  # only the newest get widgets at first
    answer = view.add_message(Message(id="live", role="assistant"))
    for n in range(50):
        view.append_text("live", f"word{n} ")
    assert view.renders == 0  # coalesced: nothing rendered inside the same frame
    qtbot.waitUntil(lambda: view.renders == 1)
    assert "word49" in answer.plain_text()
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    bar.setValue(bar.maximum() // 2)  # the person scrolls up
    assert not view.following
    view.append_text("live", "\n\nmore text arrives")
    qtbot.waitUntil(lambda: view.jump_button.isVisible())
    assert bar.value() < bar.maximum()
    view.jump_button.click()
    assert view.following and bar.value() == bar.maximum()


def test_transcript_builds_older_messages_when_scrolled_to_the_top(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    messages = []
    for i in range(100):
        calls = (
            [ToolCall(id=f"c{i}", name="files__read", outcome="ok", result_text="ok")]
            if i % 4 == 1
            else []
        )
        messages.append(
            Message(
                id=f"m{i}",
                role="user" if i % 2 == 0 else "assistant",
                text=f"Message {i}",
                tool_calls=calls,
            )
        )
    view.set_messages(messages, {})
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0)
    first = view.first
    view.verticalScrollBar().setValue(0)
    qtbot.waitUntil(lambda: view.first < first)
    assert "m0" not in view.widgets or view.first == 0
    card_widgets = [c for w in view.widgets.values() for c in w.cards.values()]
    assert card_widgets and all(c.status.text() == "Done" for c in card_widgets)


def test_every_control_of_the_chats_place_has_an_accessible_name(qtbot: QtBot) -> None:
    from portico.ui.chat.pane import ChatsPlace

    place = ChatsPlace()
    qtbot.addWidget(place)
    place.pane.transcript.set_messages(
        [Message(id="u", role="user", text="hi"), Message(id="a", role="assistant", text="hello")],
        {},
    )
    unnamed = [
        w.text() if isinstance(w, QPushButton | QLabel) else type(w).__name__
        for w in place.findChildren(QPushButton)
        if not w.accessibleName()
    ]
    assert unnamed == []
    assert QApplication.instance() is not None


def test_any_question_can_be_edited_and_versions_show_a_switcher(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    messages = [
        Message(id="q1", role="user", text="First question"),
        Message(id="a1", role="assistant", text="First answer", parent_id="q1"),
        Message(id="q2", role="user", text="Second question", parent_id="a1"),
        Message(id="a2", role="assistant", text="Second answer", parent_id="q2"),
    ]
    view.set_messages(messages, {"a1": ["a0", "a1", "a9"]})
    first, answer = view.widgets["q1"], view.widgets["a1"]
    qtbot.waitUntil(lambda: first.isVisible() and answer.isVisible())
    assert first.edit_button.isVisible()  # not only the last question
    assert view.widgets["a1"].regenerate_button.isVisible()  # any answer, not only the last
    shown = (answer.prev_branch.text(), answer.branch_label.text(), answer.next_branch.text())
    assert shown == ("‹", "2/3", "›") and answer.branch_label.isVisible()
    assert not view.widgets["q2"].branch_label.isVisible()
    switched: list[str] = []
    answer.switchRequested.connect(switched.append)
    answer.next_branch.click()
    answer.prev_branch.click()
    assert switched == ["a9", "a0"]
    edits: list[tuple[str, str]] = []
    view.editSubmitted.connect(lambda mid, text: edits.append((mid, text)))
    first.edit_button.click()
    assert first.editor is not None
    first.editor.setPlainText("First question, better")
    first.edit_send.click()
    assert edits == [("q1", "First question, better")]
    view.set_running(True)
    assert not view.widgets["q2"].edit_button.isVisible()  # not while a turn runs
