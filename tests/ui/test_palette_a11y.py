"""Dark palettes stay readable (coloured text is derived from the palette) and every
interactive widget has an accessible name and is reachable by Tab."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from PySide6.QtGui import QColor, QPalette, QTextFormat
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenuBar,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

from portico.prompts import AuthorizeRequest, ElicitationRequest, Notice
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.dialogs.oauth_dialog import OAuthDialog
from portico.ui.notices import NoticeArea
from portico.ui.pages.overview import OverviewPage
from portico.ui.pages.result_view import ResultView
from portico.ui.pages.tools import schema_html, tool_html
from portico.ui.palette import contrast
from tests.ui.pages_helpers import SHOWCASE, running_app, select, write_global
from tests.ui.qt_helpers import until
from tests.ui.screenshots import dialogs

pytestmark = pytest.mark.slow  # talks to real servers or processes

MIN_CONTRAST = 4.5  # WCAG AA for normal text


def dark_palette() -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#181818",
        QPalette.ColorRole.AlternateBase: "#262626",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#303134",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Highlight: "#3d6fb6",
        QPalette.ColorRole.HighlightedText: "#ffffff",
    }
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    return pal


@pytest.fixture
async def dark() -> AsyncIterator[QPalette]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.palette()
    pal = dark_palette()
    app.setPalette(pal)
    yield pal
    app.setPalette(before)


@dataclass
class Sample:
    where: str
    color: QColor
    background: QColor


def document_colors(view: QTextEdit, where: str) -> list[Sample]:
    """Every explicitly coloured run of text in a text view, with the view's background."""
    background = view.palette().color(QPalette.ColorRole.Base)
    out: list[Sample] = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fragment.isValid() and fmt.hasProperty(QTextFormat.Property.ForegroundBrush):
                text = fragment.text().strip()[:30]
                out.append(Sample(f"{where}: {text!r}", fmt.foreground().color(), background))
            it += 1
        block = block.next()
    return out


def label_colors(label: QLabel, where: str) -> list[Sample]:
    """A label's own text colour and any colour its rich text sets."""
    pal = label.palette()
    background = pal.color(QPalette.ColorRole.Window)
    out = [Sample(where, pal.color(QPalette.ColorRole.WindowText), background)]
    for color in re.findall(r"color:\s*(#[0-9a-fA-F]{6}|[a-z]+)", label.text()):
        out.append(Sample(f"{where} (rich text)", QColor(color), background))
    return out


def low_contrast(samples: list[Sample]) -> list[str]:
    return [
        f"{s.where}: {s.color.name()} on {s.background.name()} = "
        f"{contrast(s.color, s.background):.1f}"
        for s in samples
        if contrast(s.color, s.background) < MIN_CONTRAST
    ]


async def test_dark_palette_keeps_coloured_text_readable(dark: QPalette) -> None:
    from portico.runtime.results import TextPart, ToolResult

    samples: list[Sample] = []
    view = ResultView()
    view.show_message("Please fill in: Query", error=True)
    samples += document_colors(view, "result message (error)")
    view.show_message("Calling lookup…")
    samples += document_colors(view, "result message")
    view.show_result(ToolResult(parts=(TextPart("boom"),), is_error=True))
    samples += document_colors(view, "error result")
    view.show_result(ToolResult(parts=()))
    samples += document_colors(view, "empty result")

    from portico.ui.runtime_thread.snapshots import ToolInfo

    tool = ToolInfo(
        name="delete_item",
        qualified="x__delete_item",
        description="Delete it.",
        input_schema={
            "type": "object",
            "properties": {"item_id": {"type": "string"}},
            "required": ["item_id"],
        },
        annotations={
            "destructiveHint": True,
            "readOnlyHint": True,
            "openWorldHint": True,
            "idempotentHint": True,
        },
        filtered_reason="excluded by tools.exclude entry 'delete_item'",
    )
    details = QTextEdit()
    details.setHtml(tool_html(tool) + schema_html({}))
    samples += document_colors(details, "tool details")

    overview = OverviewPage()
    overview._show_error("connection refused")
    samples += label_colors(overview.error, "overview last error")

    elicit = ElicitationDialog(ElicitationRequest("x", "Pick", schema={}, error="age: too low"))
    samples += label_colors(elicit.error_label, "elicitation error")
    oauth = OAuthDialog(
        AuthorizeRequest(
            server="x",
            authorize_url="https://a.example/authorize?state=s",
            redirect_uri="http://127.0.0.1:1/cb",
            timeout=60,
            browser_opened=False,
            check_paste=lambda t: None if "code=" in t else "no code= in the pasted text",
        )
    )
    oauth.paste_field.setText("nothing")
    samples += label_colors(oauth.feedback, "oauth feedback (wrong)")
    oauth.paste_field.setText("?code=1&state=s")
    samples += label_colors(oauth.feedback, "oauth feedback (right)")

    approval = dialogs()["approval"]()
    samples += [
        s for label in approval.findChildren(QLabel) for s in label_colors(label, "approval")
    ]

    notices = NoticeArea()
    for level in ("info", "warning", "error"):
        row = notices.post(Notice(level, f"a {level} notice"))  # type: ignore[arg-type]
        samples += label_colors(row.label, f"{level} notice")

    assert len(samples) > 15, samples
    bad = low_contrast(samples)
    assert not bad, "\n".join(bad)
    for widget in (view, details, overview, elicit, oauth, approval, notices):
        widget.deleteLater()


async def test_toned_labels_follow_a_switch_to_dark(dark: QPalette) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setPalette(QPalette(QColor("#f0f0f0")))  # start light
    overview = OverviewPage()
    overview._show_error("connection refused")
    light = label_colors(overview.error, "light")
    assert not low_contrast(light)
    app.setPalette(dark)  # the OS switched to dark while the app runs
    await until(
        lambda: overview.error.palette().color(QPalette.ColorRole.Window) == dark.window().color(),
        5,
        "the new palette to reach the label",
    )
    await asyncio.sleep(0.05)
    dark_samples = label_colors(overview.error, "after the switch")
    assert dark_samples[0].color != light[0].color
    assert not low_contrast(dark_samples), low_contrast(dark_samples)
    overview.deleteLater()


# --- accessibility -------------------------------------------------------------------------

INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QAbstractSpinBox,
    QComboBox,
    QAbstractItemView,
    QTextEdit,
    QPlainTextEdit,
    QTabBar,
)


def _is_part_of_another_control(widget: QWidget, root: QWidget) -> bool:
    """Qt's own sub-widgets (a spin box's line edit, a tab bar's scroll buttons...)."""
    if isinstance(widget, QHeaderView):
        return True
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, INTERACTIVE) and not isinstance(parent, QTextEdit | QPlainTextEdit):
            return True
        if isinstance(parent, QMenuBar):  # its overflow button: menus are keyboard-reached
            return True
        parent = parent.parentWidget()
    return False


def _buddied(root: QWidget) -> set[int]:
    return {id(label.buddy()) for label in root.findChildren(QLabel) if label.buddy() is not None}


CHECKED: list[str] = []


def a11y_problems(root: QWidget, where: str) -> list[str]:
    problems: list[str] = []
    buddies = _buddied(root)
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, INTERACTIVE) or _is_part_of_another_control(widget, root):
            continue
        CHECKED.append(f"{where}: {type(widget).__name__} {widget.accessibleName()}")
        name = widget.accessibleName().strip()
        kind = type(widget).__name__
        text = widget.text() if isinstance(widget, QAbstractButton) else ""
        label = f"{where}: {kind} {name or text or widget.objectName() or '(unnamed)'}"
        if not name and id(widget) not in buddies:
            problems.append(f"{label}: no accessible name and no label buddy")
        if widget.focusPolicy() == widget.focusPolicy().NoFocus:
            problems.append(f"{label}: not reachable by Tab (NoFocus)")
    return problems


async def test_every_interactive_widget_is_named_and_reachable_by_tab() -> None:
    problems: list[str] = []
    for name, build in dialogs().items():
        dialog = build()
        problems += a11y_problems(dialog, f"{name} dialog")
        dialog.deleteLater()

    write_global(SHOWCASE)
    async with running_app("showcase") as desktop:
        pages = desktop.pages
        select(desktop, "showcase")
        await until(lambda: len(pages.tools.tools) >= 6, 30, "the tools")
        pages.tools.select_tool("lookup")  # builds the Try it form
        tabs = desktop.window.page
        tabs.setCurrentWidget(pages.prompts)
        await until(lambda: pages.prompts.prompts, 30, "the prompts")
        tabs.setCurrentWidget(pages.resources)
        await until(lambda: pages.resources.model.rowCount() > 0, 30, "the resources")
        problems += a11y_problems(desktop.window, "main window")
    in_window = [c for c in CHECKED if c.startswith("main window")]
    print(f"\nchecked {len(CHECKED)} interactive widgets ({len(in_window)} in the main window)")
    assert len(in_window) > 20, in_window  # the pages' lists, forms and buttons were there
    assert not problems, "\n".join(problems)
