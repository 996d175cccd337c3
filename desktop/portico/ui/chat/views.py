"""MCP Apps views in the chat: under the card of a call whose tool has a view.

A view starts as a placeholder (a line of text, no web engine) and is opened only when
it is scrolled into sight. A live view scrolled out of sight is paused (its page frozen:
no script or timer runs, its state stays) and resumes as it was when it comes back. At
most ``chat.live_views`` views are loaded at a time (:data:`LIVE` until a view brings the
setting); when another comes into sight, the one seen least recently is suspended back to
its placeholder (told to tear down first, its web view and page gone) and, scrolled back,
opens afresh: a new session that is sent the tool's input and result again. Opening goes
through the chat's runtime side (``ChatService.open_view``), so the view's calls use that
chat's context.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from portico.config.model import DEFAULT_LIVE_VIEWS
from portico.ui.palette import set_tone
from portico.ui.text import plain_label
from portico.ui.views.view_pane import Opener, ViewPane

if TYPE_CHECKING:
    from portico.runtime.results import ToolResult
    from portico.ui.pages.common import PageBackend
    from portico.ui.runtime_thread.chat_service import ChatService
    from portico.ui.runtime_thread.page_service import PageService
    from portico.ui.runtime_thread.view_service import ViewService

LIVE = DEFAULT_LIVE_VIEWS  # views loaded at once in a transcript, until the setting comes
CHECK_DELAY = 40  # ms: scrolling is coalesced before views are checked
PLACEHOLDER_HEIGHT = 120  # px, so the transcript does not jump when a view opens


class ChatView(QFrame):
    """One view under a card: a placeholder, or the live :class:`ViewPane`."""

    def __init__(
        self,
        backend: PageBackend,
        server: str,
        qualified: str,
        uri: str,
        arguments: dict[str, Any],
        result: ToolResult,
        opener: Opener,
    ) -> None:
        super().__init__()
        self.setObjectName("chatview")
        self.server, self.qualified, self.uri = server, qualified, uri
        self.arguments, self.result, self.opener = arguments, result, opener
        self.live = False
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 4, 0, 0)
        self.placeholder = QLabel(f"View {uri} — shown when scrolled into sight")
        self.placeholder.setTextFormat(Qt.TextFormat.PlainText)
        self.placeholder.setAccessibleName("view placeholder")
        self.placeholder.setMinimumHeight(PLACEHOLDER_HEIGHT)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        set_tone(self.placeholder, "muted")
        column.addWidget(self.placeholder)
        self.pane = ViewPane(backend)
        column.addWidget(self.pane)

    def activate(self) -> None:
        if self.live:
            return
        self.live = True
        self.placeholder.hide()
        self.pane.open_view(self.server, self.qualified, self.arguments, self.result, self.opener)

    def suspend(self) -> None:
        """Back to the placeholder; the view is told to tear down before it goes."""
        if not self.live:
            return
        self.live = False
        self.pane.close_view()
        self.placeholder.show()


class ChatViews(QObject):
    """The views of the transcript shown (see the module docstring)."""

    def __init__(
        self,
        transcript: QScrollArea,
        service: Callable[[], ChatService | None],
        conversation: Callable[[], str | None],
    ) -> None:
        super().__init__(transcript)
        self.transcript = transcript
        self.backend: PageBackend | None = None  # set by the app (the server pages' one)
        self._service = service
        self._conversation = conversation
        self.limit = LIVE
        self.views: list[ChatView] = []
        self.live: list[ChatView] = []  # least recently seen first
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY)
        self._timer.timeout.connect(self.check)
        transcript.verticalScrollBar().valueChanged.connect(lambda _v: self._timer.start())
        transcript.verticalScrollBar().rangeChanged.connect(lambda _a, _b: self._timer.start())

    def add(
        self,
        card: QWidget,
        uri: str,
        server: str,
        qualified: str,
        arguments: dict[str, Any],
        result: ToolResult,
    ) -> ChatView | None:
        """A placeholder under ``card`` for the view of its result."""
        service, conversation = self._service(), self._conversation()
        if self.backend is None or service is None or conversation is None:
            return None

        def opener(
            deliver: Callable[[str], None], theme: str, on_mode: Callable[[str], None]
        ) -> Any:  # runs on the runtime thread
            return service.open_view(
                conversation,
                qualified,
                arguments,
                result,
                deliver,
                theme=theme,
                on_display_mode=on_mode,
            )

        view = ChatView(self.backend, server, qualified, uri, arguments, result, opener)
        layout = card.layout()
        if layout is not None:
            layout.addWidget(view)
        self.views.append(view)
        self._timer.start()
        return view

    def _in_sight(self, view: ChatView) -> bool:
        if not view.isVisible():
            return False
        viewport = self.transcript.viewport()
        top_left = view.mapTo(viewport, QPoint(0, 0))
        return viewport.rect().intersects(QRect(top_left, view.size()))

    def check(self) -> None:
        """Open a view in sight (one per call; the next is checked a moment later), within
        the limit; suspend the least recently seen."""
        gone = [v for v in self.views if not _alive(v)]
        if gone:
            self._forget(gone)
            self.views = [v for v in self.views if v not in gone]
        self.live = [v for v in self.live if v in self.views and v.live]
        sight = {id(v): self._in_sight(v) for v in self.views}
        for view in self.live:
            view.pane.set_frozen(not sight[id(view)])
            opened = view.pane.opened
            if opened is not None:
                self.limit = opened.live_limit  # the config's, as of that view's opening
        for view in self.views:
            if not sight[id(view)]:
                continue
            if view.live:
                self.live.remove(view)
                self.live.append(view)
                continue
            if len(self.live) >= self.limit:
                victim = next((v for v in self.live if not sight[id(v)]), None)
                if victim is None:
                    continue  # all live ones are in sight: this one waits for a scroll
                self.live.remove(victim)
                victim.suspend()
            view.activate()
            self.live.append(view)
            # one view opened per check: making its web view and page costs the GUI ~15 ms
            # (py-spy, tests/benchmarks/test_bench_chat_views.py); three in one go were one
            # stall of the scroll. The rest wait for the next check, CHECK_DELAY later.
            self._timer.start()
            return

    def _forget(self, gone: list[ChatView]) -> None:
        """Views whose card the transcript dropped (a long chat): their sessions end."""
        backend = self.backend
        for view in gone:
            opened = view.pane.opened  # a Python attribute: readable after the widget went
            if opened is None or backend is None:
                continue
            backend.op(_closer(opened.id), f"Close the view {opened.uri}").run()

    def clear(self) -> None:
        """The transcript shows another chat: every view goes."""
        gone = [v for v in self.views if not _alive(v)]
        self._forget(gone)
        for view in self.live:
            if view not in gone:
                view.suspend()
        self.views, self.live = [], []


def _closer(view_id: str) -> Callable[[PageService], Awaitable[None]]:
    def close(pages: PageService) -> Awaitable[None]:
        views: ViewService = pages.views
        return views.close(view_id)

    return close


def _alive(widget: QWidget) -> bool:
    try:
        widget.objectName()
    except RuntimeError:  # its C++ side was deleted with its card
        return False
    return True


def add_missing_note(card: QWidget, uri: str, server: str, tool: str) -> QLabel:
    """Under a stored card whose tool had a view that cannot be opened now: one line
    saying so (server text shown as plain text)."""
    note = plain_label(
        f"This result had a view ({uri}); it cannot be shown now: "
        f"{server} is not connected or no longer offers {tool} with a view."
    )
    note.setAccessibleName("view unavailable")
    set_tone(note, "muted")
    layout = card.layout()
    if layout is not None:
        layout.addWidget(note)
    return note
