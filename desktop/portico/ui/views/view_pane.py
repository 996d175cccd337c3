"""The widget a view is shown in, under a tool's result (Try it) or its card (the chat).

It asks the runtime side for the view (``PageService.views``, or the chat's own opener),
renders the page (``page_html``) in a web view on the server's own profile (``engine``),
and carries the view's messages both ways. The web engine is imported on the first
view shown, so an app that never shows a view never loads it.

Paused: a chat pauses a view scrolled out of sight (:meth:`ViewPane.set_frozen`, the web
engine's ``Frozen`` lifecycle state: its scripts and timers stop, its page and state stay)
and resumes it, as it was, when it comes back into sight; what Portico sends it meanwhile
is handled then. A view in its own window is never paused.

Display modes: the view's ``ui/request-display-mode`` moves its web view into a
fullscreen window or a small floating one kept on top (``pip``), and back; closing that
window brings the view back inline and tells it so.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QFocusEvent, QKeyEvent, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QStyle, QStyleOptionFocusRect, QVBoxLayout, QWidget

from portico.apps.heights import MAX_HEIGHT as PERSON_MAX_HEIGHT
from portico.apps.heights import MIN_HEIGHT
from portico.text import visible
from portico.ui.pages.common import PageBackend

if TYPE_CHECKING:
    from portico.runtime.results import ToolResult
    from portico.ui.runtime_thread.page_service import PageService
    from portico.ui.runtime_thread.view_service import ViewOpened

log = logging.getLogger(__name__)

MAX_HEIGHT = 600  # pixels a view may ask for; it scrolls inside beyond that
GRIP_HEIGHT = 8  # pixels
KEY_STEP, PAGE_STEP = 20, 100  # pixels an arrow key / Page Up or Down moves the grip
KEY_SETTLE = 400  # ms after the last key before the height is remembered
PIP_SIZE = (420, 300)  # pixels, the floating window's first size

# (deliver, theme, on_display_mode) -> the opened view; runs on the runtime thread
Opener = Callable[[Callable[[str], None], str, Callable[[str], None]], Awaitable["ViewOpened"]]


class ViewWindow(QWidget):
    """The window a view is shown in fullscreen or as a floating window."""

    closed = Signal()

    def __init__(self, title: str, mode: str) -> None:
        flags = Qt.WindowType.Window
        if mode == "pip":
            flags |= Qt.WindowType.WindowStaysOnTopHint | Qt.WindowType.Tool
        super().__init__(None, flags)
        self.setWindowTitle(title)
        self.setAccessibleName(f"view window ({mode})")
        self.mode = mode
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.closed.emit()
        super().closeEvent(event)


class HeightGrip(QWidget):
    """The strip under an inline view the person drags to make it taller or shorter;
    ``dragged`` while dragging, ``released`` with the height when they let go. From the
    keyboard too: it takes focus (Tab), Down / Up make the view taller / shorter by
    :data:`KEY_STEP`, Page Down / Page Up by :data:`PAGE_STEP`, Home / End to the least /
    most; the height is remembered :data:`KEY_SETTLE` ms after the last key."""

    dragged = Signal(int)
    released = Signal(int)

    def __init__(self, target: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target = target
        self.setFixedHeight(GRIP_HEIGHT)
        self.setCursor(Qt.CursorShape.SizeVerCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("view height grip")
        self.setAccessibleDescription(
            "Up and Down arrow keys make the view shorter or taller; its height is remembered"
        )
        self.setToolTip("Drag, or focus and press Up/Down, to resize the view; remembered")
        self._start: tuple[float, int] | None = None
        self._keyed: int | None = None  # the height keys set, not yet remembered
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(KEY_SETTLE)
        self._settle.timeout.connect(self._keys_settled)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._start = (event.globalPosition().y(), self.target.height())
            event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._start is not None:
            self.dragged.emit(self._height(event))
            event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._start is not None and event.button() == Qt.MouseButton.LeftButton:
            height = self._height(event)
            self._start = None
            self.released.emit(height)
            event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, now = Qt.Key(event.key()), self.target.height()
        steps = {
            Qt.Key.Key_Down: now + KEY_STEP,
            Qt.Key.Key_Up: now - KEY_STEP,
            Qt.Key.Key_PageDown: now + PAGE_STEP,
            Qt.Key.Key_PageUp: now - PAGE_STEP,
            Qt.Key.Key_Home: MIN_HEIGHT,
            Qt.Key.Key_End: PERSON_MAX_HEIGHT,
        }
        if key not in steps or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
            return
        self._keyed = max(MIN_HEIGHT, min(steps[key], PERSON_MAX_HEIGHT))
        self.dragged.emit(self._keyed)
        self._settle.start()
        event.accept()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.settle()
        super().focusOutEvent(event)

    def settle(self) -> None:
        """A keyed height not yet remembered is, now (focus leaves, the view closes)."""
        if self._settle.isActive():
            self._settle.stop()
            self._keys_settled()

    def _keys_settled(self) -> None:
        keyed, self._keyed = self._keyed, None
        if keyed is not None:
            self.released.emit(keyed)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.hasFocus():  # where the keyboard is, visibly (the strip is otherwise blank)
            option = QStyleOptionFocusRect()
            option.initFrom(self)
            painter = QPainter(self)
            self.style().drawPrimitive(
                QStyle.PrimitiveElement.PE_FrameFocusRect, option, painter, self
            )
            painter.end()

    def _height(self, event: QMouseEvent) -> int:
        assert self._start is not None
        y, height = self._start
        wanted = height + round(event.globalPosition().y() - y)
        return max(MIN_HEIGHT, min(wanted, PERSON_MAX_HEIGHT))


def engine_refusal() -> str | None:
    """Why views cannot be shown on this machine, or None (checked without loading it)."""
    if importlib.util.find_spec("PySide6.QtWebEngineWidgets") is None:
        return "Views need QtWebEngine (the PySide6-Addons package), which is not installed."
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--no-sandbox" not in flags:
        return (
            "Views are not shown while Portico runs as root: the web engine will not run "
            "its own sandbox as root. Run Portico as your own user."
        )
    return None


class ViewPane(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.opened: ViewOpened | None = None
        self.web: Any = None  # QWebEngineView, made on the first view
        self.bridge: Any = None
        self.page: Any = None
        self.ready = False
        self.heard: list[str] = []  # what the view sent, in order (a face's log, and tests)
        self.display_mode = "inline"
        self.chosen_height: int | None = None  # the person's, which a view's asks do not undo
        self.grip: HeightGrip | None = None
        self._served: tuple[Any, str, str] | None = None  # (anchor, server, frame url)
        self.window_of_mode: ViewWindow | None = None
        self.frozen = False
        self.column = layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.caption = QLabel()
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.hide()

    def open_view(
        self,
        server: str,
        qualified: str,
        arguments: dict[str, Any],
        result: ToolResult,
        opener: Opener | None = None,
    ) -> None:
        """Ask for the view of this result and show it when it comes; ``opener``: how
        (the chat's, for a view in a chat), else Try it's ``PageService.views.open``."""
        self.close_view()
        refusal = engine_refusal()
        if refusal is not None:
            self.caption.setText(f"This result has a view, not shown here. {refusal}")
            self.show()
            return
        loop = asyncio.get_running_loop()
        token = object()
        self._token = token

        def deliver(text: str) -> None:  # called on the runtime thread
            loop.call_soon_threadsafe(self._deliver, token, text)

        def display_mode(mode: str) -> None:  # called on the runtime thread
            loop.call_soon_threadsafe(self._mode_asked, token, mode)

        theme = "dark" if self.palette().window().color().lightness() < 128 else "light"

        def open_it(pages: PageService) -> Awaitable[ViewOpened]:
            if opener is not None:
                return opener(deliver, theme, display_mode)
            return pages.views.open(
                qualified, arguments, result, deliver, theme=theme, on_display_mode=display_mode
            )

        self.backend.op(
            open_it,
            f"Show the view of {qualified}",
            server=server,
        ).success(lambda opened: self._show(token, opened)).failure(self._failed).run()

    def _failed(self, exc: Exception) -> None:
        self.caption.setText(visible(f"The view cannot be shown: {exc}"))
        self.show()

    def _show(self, token: object, opened: ViewOpened) -> None:
        if token is not self._token:  # closed (or suspended) while it was opening
            view_id = opened.id
            self.backend.op(
                lambda pages: pages.views.close(view_id), f"Close the view {opened.uri}"
            ).run()
            return
        try:
            from PySide6.QtWebChannel import QWebChannel
            from PySide6.QtWebEngineWidgets import QWebEngineView

            from portico.ui.views import engine
            from portico.ui.views.page_html import allow_attribute, host_page, view_document
        except ImportError as exc:  # a system library the web engine needs is missing
            view_id = opened.id
            self.backend.op(
                lambda pages: pages.views.close(view_id), f"Close the view {opened.uri}"
            ).run()
            self._failed(RuntimeError(f"the web engine cannot start ({exc})"))
            return

        self.opened = opened
        anchor = self.window()
        profile = engine.profile_for(anchor, opened.server, opened.origins)
        frame = engine.frame_url(opened.server, opened.id)
        engine.serve(anchor, opened.server, frame, view_document(opened.html, opened.csp))
        self._served = (anchor, opened.server, frame)
        self.web = QWebEngineView(self)
        self.page = engine.ViewWebPage(
            profile,
            opened.server,
            self.web,
            frames=opened.frames,
            frame=frame,
            declared=opened.permissions,
        )
        self.bridge = engine.Bridge(self.page)
        channel = QWebChannel(self.page)
        channel.registerObject("host", self.bridge)
        self.page.setWebChannel(channel)
        self.bridge.posted.connect(self._posted)
        self.bridge.resized.connect(self._resized)
        self.bridge.is_ready.connect(self._ready)
        self.page.asks.connect(self._permission_asked)
        self.web.setPage(self.page)
        self.web.setMinimumHeight(150)
        self.web.setMaximumHeight(MAX_HEIGHT)
        self.column.addWidget(self.web)
        self.grip = HeightGrip(self.web, self)
        self.grip.dragged.connect(self._set_height)
        self.grip.released.connect(self._height_chosen)
        self.column.addWidget(self.grip)
        self.chosen_height = opened.height
        if opened.height is not None:
            self._set_height(opened.height)
        lines = [f"View {opened.uri} of {opened.server}.", *opened.policy_lines]
        if opened.permissions:
            lines.append(f"It may ask for {', '.join(opened.permissions)}: you will be asked.")
        self.caption.setText(visible(" ".join(lines)))
        page = host_page(
            frame,
            engine.channel_js(),
            border=opened.prefers_border is not False,
            allow=allow_attribute(opened.permissions),
        )
        self.page.setHtml(page, QUrl(engine.host_url(opened.server)))
        self.show()

    def set_frozen(self, frozen: bool) -> None:
        """Pause the view's page (out of sight) or resume it. The engine freezes only a page
        it counts as hidden, so the page is marked hidden first (the widget stays, at its
        height: the transcript does not move)."""
        page = self.page
        if page is None:
            self.frozen = False
            return
        if self.display_mode != "inline":
            frozen = False
        if frozen == self.frozen:
            return
        from PySide6.QtWebEngineCore import QWebEnginePage

        states = QWebEnginePage.LifecycleState
        if frozen:
            page.setVisible(False)
            page.setLifecycleState(states.Frozen)
        else:
            page.setLifecycleState(states.Active)
            page.setVisible(self.web is not None and self.web.isVisible())
        self.frozen = frozen

    def _permission_asked(self, kind: str, permission: Any) -> None:
        """The page asks for ``kind``: the person answers (once per view while Portico
        runs); a view closed meanwhile gets nothing."""
        opened, page = self.opened, self.page
        if opened is None or page is None:
            return
        view_id = opened.id

        def answered(granted: bool) -> None:
            if self.page is page:
                page.answer(kind, permission, granted)

        self.backend.op(
            lambda pages: pages.views.ask_permission(view_id, kind),
            f"The view {opened.uri} asks for {kind}",
            server=opened.server,
        ).success(answered).failure(lambda _exc: answered(False)).run()

    def _ready(self) -> None:
        self.ready = True

    def _resized(self, height: int) -> None:
        """The view asks for ``height`` (ui/notifications/size-changed): given, within
        40..MAX_HEIGHT, unless the person chose a height for it."""
        if self.web is not None and self.chosen_height is None and self.display_mode == "inline":
            self.web.setFixedHeight(max(40, min(height, MAX_HEIGHT)))

    def _set_height(self, height: int) -> None:
        if self.web is not None and self.display_mode == "inline":
            self.web.setFixedHeight(max(MIN_HEIGHT, min(height, PERSON_MAX_HEIGHT)))

    def _height_chosen(self, height: int) -> None:
        """The person let go of the grip: this view's height from now on, everywhere."""
        opened = self.opened
        if opened is None:
            return
        self._set_height(height)
        self.chosen_height = self.web.height() if self.web is not None else height
        server, uri, chosen = opened.server, opened.uri, self.chosen_height
        self.backend.op(
            lambda pages: pages.views.remember_height(server, uri, chosen),
            f"Remember the height of the view {uri}",
        ).run()

    def _deliver(self, token: object, text: str) -> None:
        if token is self._token and self.bridge is not None:
            self.bridge.deliver.emit(text)

    def _posted(self, text: str) -> None:
        opened = self.opened
        if opened is None:
            return
        self.heard.append(text)
        view_id = opened.id
        self.backend.op(
            lambda pages: pages.views.message(view_id, text),
            f"A message of the view {opened.uri}",
            server=opened.server,
        ).run()

    # --- display modes ----------------------------------------------------------------

    def _mode_asked(self, token: object, mode: str) -> None:
        if token is self._token and self.web is not None:
            self.set_display_mode(mode)

    def set_display_mode(self, mode: str) -> None:
        """Show the web view inline, fullscreen or floating (the session already holds
        the mode; :meth:`_window_closed` tells it when the person goes back inline)."""
        web, opened = self.web, self.opened
        if web is None or opened is None or mode == self.display_mode:
            return
        old, self.window_of_mode = self.window_of_mode, None
        if mode != "inline":
            self.set_frozen(False)  # seen in its own window
        if mode == "inline":
            at = self.column.indexOf(self.grip) if self.grip is not None else -1
            self.column.insertWidget(at, web)
            web.setMaximumHeight(MAX_HEIGHT)
            if self.chosen_height is not None:
                self.display_mode = mode
                self._set_height(self.chosen_height)
        else:
            window = ViewWindow(f"{opened.uri} — {opened.server}", mode)
            window.column.addWidget(web)
            web.setMaximumHeight(16777215)
            web.setMinimumHeight(150)
            window.closed.connect(lambda: self._window_closed(window))
            self.window_of_mode = window
            if mode == "fullscreen":
                window.showFullScreen()
            else:
                window.resize(*PIP_SIZE)
                window.show()
        self.display_mode = mode
        if self.grip is not None:
            self.grip.setVisible(mode == "inline")
        if old is not None:
            old.closed.disconnect()
            old.close()
            old.deleteLater()

    def _window_closed(self, window: ViewWindow) -> None:
        """The person closed the view's window: the view comes back inline."""
        opened = self.opened
        if window is not self.window_of_mode or opened is None:
            return
        self.set_display_mode("inline")
        view_id = opened.id
        self.backend.op(
            lambda pages: pages.views.set_display_mode(view_id, "inline"),
            f"Show the view {opened.uri} inline",
        ).run()

    def close_view(self) -> None:
        """Tear the view down (it is told first, on the runtime side)."""
        if self.display_mode != "inline" and self.web is not None:
            self.set_display_mode("inline")
        if self.grip is not None:
            self.grip.settle()
        self._token = object()
        opened, self.opened = self.opened, None
        if opened is not None:
            view_id = opened.id
            self.backend.op(
                lambda pages: pages.views.close(view_id), f"Close the view {opened.uri}"
            ).run()
        served, self._served = self._served, None
        if served is not None:
            from portico.ui.views import engine

            engine.serve(*served, None)
        if self.grip is not None:
            self.grip.setParent(None)
            self.grip.deleteLater()
            self.grip = None
        if self.web is not None:
            self.web.setParent(None)
            self.web.deleteLater()
            self.web = self.page = self.bridge = None
        self.frozen = False
        self.chosen_height = None
        self.ready = False
        self.caption.clear()
        self.hide()
