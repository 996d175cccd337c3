"""The desktop app's entry point (``portico-desktop`` and ``portico`` without arguments).

Order matters: the window is shown and painted before ``mcp`` is imported or the hub
starts; the hub then runs on the runtime thread (ui/facade.py) and reaches the window
through the bridge (events) and the QtPrompter (questions). The chat pane and the first-run
flows, the Servers place's tabs and the prompter's dialogs are not imported before the
first paint either (ui/after_paint.py): the window opens with a placeholder in the Chats
place and the real one is built right after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QApplication, QMenu

from portico import __version__
from portico.prompts import Notice
from portico.ui.actions import ActionId
from portico.ui.after_paint import import_after_paint
from portico.ui.bridge import EventBridge
from portico.ui.chat.bridge import ChatBridge
from portico.ui.facade import RuntimeThread
from portico.ui.gc_guard import GarbageCollector
from portico.ui.icons import announced_icon, app_icon
from portico.ui.link_flow import LinkFlow
from portico.ui.login_setting import StartAtLoginAction
from portico.ui.loop import GIL_SWITCH_INTERVAL, PorticoEventLoop, ensure_application
from portico.ui.main_window import MainWindow
from portico.ui.models.servers import ServerListModel
from portico.ui.ops import NoRuntime, Ops
from portico.ui.palette import follow_os_scheme
from portico.ui.single_instance import SingleInstance
from portico.ui.trace import trace
from portico.ui.tray import Tray
from portico.ui.tray_state import summary as live_summary

if TYPE_CHECKING:
    from portico.config.model import Config
    from portico.runtime.events import ServerState
    from portico.ui.chat.controller import ChatController
    from portico.ui.editor.window import ConfigEditorWindow
    from portico.ui.onboarding.controller import Onboarding
    from portico.ui.pages.controller import ServerPages
    from portico.ui.prompter import QtPrompter
    from portico.ui.runtime_thread.chat_service import ChatService
    from portico.ui.runtime_thread.session import LoadResult, RuntimeSession

    SessionCall = Callable[[RuntimeSession, str], Coroutine[Any, Any, ServerState]]

log = logging.getLogger(__name__)

FIRST_PAINT_WAIT = 3.0  # seconds; offscreen or odd platforms may never paint
MAX_DIAGNOSTIC_NOTICES = 5


class DesktopApp(QObject):
    """Owns the window, tray, bridge, prompter and runtime thread for one app run."""

    runtimeStarted = Signal()
    configApplied = Signal(str)  # the summary line
    chatsReady = Signal()  # the Chats place, its controller and the first-run flows exist

    def __init__(
        self,
        app: QApplication,
        instance: SingleInstance | None = None,
        *,
        open_url: str | None = None,
        hidden: bool = False,
        project: Path | None = None,
    ) -> None:
        super().__init__()
        self.app = app
        self.instance = instance
        self.open_url = open_url  # a portico:// link to open once the window is up
        self.hidden = hidden  # started at login: stay in the tray (if there is one)
        self.start_project = project  # --project, or the one started in: wins over the last
        self.model = ServerListModel()
        self.bridge = EventBridge()
        self.tray = Tray()
        self.window = MainWindow(self.model, tray_available=self.tray.available)
        self.runtime = RuntimeThread()
        self.session: RuntimeSession | None = None
        self._secrets_notice: str | None = None
        self.editor: ConfigEditorWindow | None = None  # built on first use
        self.prompter: QtPrompter | None = None
        self.gc = GarbageCollector(self)
        self._quit: asyncio.Event | None = None
        self.ops = Ops(self.window.post_notice)
        self._pages: ServerPages | None = None  # built by ensure_pages (after the paint)
        self.chat_bridge = ChatBridge()
        self._chat: ChatController | None = None  # built by ensure_chats (after the paint)
        self._onboarding: Onboarding | None = None
        self.chat_service: ChatService | None = None
        self._configured = False  # servers or a model: the app opens on a chat
        self._model_ref: str | None = None  # a model the first run just connected
        self.links = LinkFlow(
            lambda: self.window if self.window.isVisible() else None,
            self.window.post_notice,
            self.apply_config,
            self,
        )
        self.start_at_login = StartAtLoginAction(self.window, notify=self.window.post_notice)
        self._add_to_file_menu(self.start_at_login)
        self._wire()

    def _add_to_file_menu(self, action: QAction) -> None:
        """Just above Quit, in whichever menu holds it."""
        quit_action = self.window.quit_action
        for top in self.window.menuBar().actions():
            menu = top.menu()
            if isinstance(menu, QMenu) and quit_action in menu.actions():
                menu.insertAction(quit_action, action)
                menu.insertSeparator(quit_action)
                return

    def _wire(self) -> None:
        self.model.connect_bridge(self.bridge)
        self.bridge.logLine.connect(self.window.add_log_line)
        # The status bar and the tray follow the servers' states (one count everywhere).
        self.model.statesChanged.connect(
            lambda: self.window.set_summary(live_summary(self.model.states()))
        )
        self.model.statesChanged.connect(lambda: self.tray.update_states(self.model.states()))
        self.window.quitRequested.connect(self.quit_asked)
        self.window.openProjectRequested.connect(
            lambda folder: self._spawn(self.apply_config(), "Open the project")
        )
        self.bridge.configChanged.connect(
            lambda: self._spawn(self.apply_config(), "Reload the config")
        )
        self.window.configEditorRequested.connect(self.open_config_editor)
        self.window.serverActionRequested.connect(self.server_action)
        self.window.hiddenToTray.connect(self._told_hidden)
        self.tray.quitRequested.connect(self.quit_asked)
        self.tray.showHideRequested.connect(self.toggle_window)
        self.tray.configEditorRequested.connect(self.open_config_editor)
        self.tray.serverActionRequested.connect(self.server_action)
        if self.instance is not None:
            self.instance.raiseRequested.connect(self.raise_window)
            self.instance.urlReceived.connect(self.open_link)
        self.window.addServerRequested.connect(lambda: self.onboarding.add_server())

    # --- what the first paint does without (ui/after_paint.py) -------------------------

    async def build_after_paint(self) -> None:
        """Import the modules the first paint did without, off the GUI thread (input and
        paints go on meanwhile), then build their widgets here: a few milliseconds."""
        if self._chat is None or self._pages is None or self.prompter is None:
            try:
                await asyncio.to_thread(import_after_paint)
            except ImportError:  # rare: imported again below, where the error is reported
                log.exception("importing in the background failed")
        self.ensure_prompter()
        self.ensure_pages()
        self.ensure_chats()

    def ensure_prompter(self) -> QtPrompter:
        if self.prompter is None:
            from portico.ui.prompter import QtPrompter

            self.prompter = QtPrompter(
                parent_widget=lambda: self.window if self.window.isVisible() else None
            )
            self.prompter.noticePosted.connect(self.window.post_notice)
            self.prompter.dialogShown.connect(self._question_shown)
        return self.prompter

    def _question_shown(self, dialog: object) -> None:
        """An approval another MCP client's call asks for, while the window is hidden:
        a desktop notification says who waits (the dialog itself opens unparented)."""
        request = getattr(dialog, "request", None)
        caller = getattr(request, "caller", None)
        if self.window.isVisible() or getattr(caller, "kind", None) != "client":
            return
        tool = getattr(request, "qualified_name", "a tool")
        self.tray.notify(
            f"{getattr(caller, 'id', '')} asks to call {tool}",
            "Another MCP client waits for your answer through Portico's local endpoint.",
            key=f"client-approval-{getattr(request, 'call_id', '') or tool}",
        )

    @property
    def pages(self) -> ServerPages:
        return self.ensure_pages()

    def ensure_pages(self) -> ServerPages:
        """The Servers place's tabs and the server actions that write the config."""
        if self._pages is None:
            from portico.ui.pages.controller import ServerPages

            pages = ServerPages(
                self.window,
                self.runtime,
                lambda: self.session,
                self.apply_config,
                self.tray,
                self.ops,
            )
            self._pages = pages
            self.bridge.authRequired.connect(pages.auth_required)
            self.bridge.sandboxRefused.connect(pages.sandbox_refused)
            self.bridge.activityChanged.connect(pages.activity_changed)
            self.bridge.resourceUpdated.connect(pages.resources.resource_updated)
            self.runtimeStarted.connect(pages.refresh)
        return self._pages

    # --- the Chats place and the first run ----------------------------------------------

    @property
    def chat(self) -> ChatController:
        return self.ensure_chats()[0]

    @property
    def onboarding(self) -> Onboarding:
        return self.ensure_chats()[1]

    def ensure_chats(self) -> tuple[ChatController, Onboarding]:
        """Build the Chats place, its controller and the onboarding once (on first use if
        something needs them before ``build_after_paint`` ran)."""
        if self._chat is not None and self._onboarding is not None:
            return self._chat, self._onboarding
        from portico.ui.chat.controller import ChatController
        from portico.ui.onboarding.controller import Onboarding
        from portico.ui.pages.common import PageBackend

        chat = ChatController(self.window.chats, self.runtime, self.chat_bridge)
        chat.transcript.icon_for = self._card_icon  # the tool's, else its server's
        chat.views.backend = PageBackend(self.runtime, lambda: self.session, self.ops)
        chat.runningChanged.connect(self.gc.set_busy)  # no full GC while a turn streams
        onboarding = Onboarding(
            lambda: self.window,
            self.runtime,
            self.apply_config,
            project=lambda: self.window.project,
            taken=lambda: {s.name for s in self.model.states()},
            secrets=lambda: self.session.services.secrets if self.session is not None else None,
            notify=self.window.post_notice,
        )
        self._chat, self._onboarding = chat, onboarding
        pane = self.window.chats.pane
        pane.serversRequested.connect(self.window.show_servers)
        pane.set_states(self.model.states())
        self.model.statesChanged.connect(lambda: pane.set_states(self.model.states()))
        self.model.statesChanged.connect(lambda: onboarding.states_changed(self.model.states()))
        onboarding.chatRequested.connect(
            lambda: self._spawn(self.start_chats(force=True), "Open a chat")
        )
        onboarding.modelConnected.connect(self._use_model)
        trace("chats ready")
        self.chatsReady.emit()
        return chat, onboarding

    # --- run -----------------------------------------------------------------------------

    async def run(self) -> int:
        self._quit = asyncio.Event()
        self.gc.start()  # cyclic garbage (Qt objects in it) dies on this thread only
        # SIGTERM from the first moment on: a session manager may stop us while we start
        restore_signals = self._handle_stop_signals()
        try:
            self.window.restore_state()
            if self.start_project is not None:
                self.window.show_project(self.start_project)
            if self.hidden and self.tray.available:
                self.tray.show()
            else:
                await self.show_and_paint()
                self.tray.show()
            if self.open_url:
                self.open_link(self.open_url)
            await self.build_after_paint()
            if not self._quit.is_set():  # not when told to quit while starting (SIGTERM)
                await self.start_runtime()
            if self.session is not None:
                self._spawn(self._first_start(), "Start")
            await self._quit.wait()
        finally:
            # Also on Ctrl+C (the Runner cancels us): stop every server before exiting.
            restore_signals()
            await self.shutdown()
        return 0

    def _handle_stop_signals(self) -> Callable[[], None]:
        """SIGTERM (and SIGINT) quit cleanly. Python runs signal handlers only between
        bytecodes of the main thread, which idles inside Qt: a slow timer lets them in."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        loop = asyncio.get_running_loop()
        pump = QTimer(self)
        pump.setInterval(200)
        pump.timeout.connect(lambda: None)
        pump.start()
        previous = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                previous[sig] = signal.signal(
                    sig, lambda *_: loop.call_soon_threadsafe(self.request_quit)
                )
            except (ValueError, OSError):  # not settable here (embedded interpreters)
                continue

        def restore() -> None:
            pump.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        return restore

    async def show_and_paint(self) -> None:
        painted = asyncio.get_running_loop().create_future()

        def on_painted() -> None:
            if not painted.done():
                painted.set_result(None)

        self.window.firstPainted.connect(on_painted)
        trace("show")
        self.window.show()
        self.window.repaint()
        if not self.window.painted:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(painted, FIRST_PAINT_WAIT)
        trace("first paint" if self.window.painted else "no paint yet")

    async def start_runtime(self) -> None:
        from portico.ui.runtime_thread.session import RuntimeSession

        prompter = self.ensure_prompter()
        self.window.set_summary("Starting the servers…")
        try:
            await asyncio.to_thread(self.runtime.start)
            self.session = await self.runtime.submit(
                RuntimeSession.create(prompter, self.bridge, self.chat_bridge.post)
            )
        except Exception as exc:
            log.exception("the runtime did not start")
            self.window.post_notice(
                Notice("error", f"The server runtime did not start: {exc}. Servers are off.")
            )
            self.window.set_summary("The server runtime is not running.")
            return
        trace("runtime started")
        self.runtimeStarted.emit()

    async def _first_start(self) -> None:
        await self.apply_config()
        await self.start_chats()

    async def start_chats(self, *, force: bool = False) -> None:
        """Servers or a model configured (or ``force``): a chat with the focus in its
        input. Neither: the welcome, which leads to one.

        ``force`` is the person asking for the chat, which shows the Chats place. The first
        start never moves them: the window opens on Chats, and a person who went to Servers
        while the app started stays there, the keyboard where they left it."""
        if self.chat_service is None:
            await self.start_chat_service()
        if force:
            self.window.show_chats()
        if (force or self._configured) and self.chat_service is not None:
            ref, self._model_ref = self._model_ref, None
            await self.chat.open_start(model=ref)
            return
        self.window.chats.pane.show_welcome(self.onboarding.welcome)
        self.window.chats.focus(self.onboarding.welcome.add_button)
        await self.onboarding.refresh_imports()

    async def start_chat_service(self) -> None:
        from portico.ui.runtime_thread.chat_service import ChatService

        session = self.session
        if session is None:
            return  # the runtime did not start (its notice says so)

        async def build() -> ChatService:
            service = ChatService(session, session.prompter, self.chat_bridge.post)
            await service.start()
            return service

        try:
            self.chat_service = await self.runtime.submit(build())
        except Exception as exc:
            log.exception("the chat did not start")
            self.window.post_notice(Notice("error", f"The chat did not start: {exc}"))
            return
        await self.chat.attach(self.chat_service)

    def _use_model(self, ref: str) -> None:
        """The model just connected: the chat that opens next uses it."""
        self._model_ref = ref

    async def _sync_chat_config(self) -> bool:
        """Hand the reloaded config to the chat host; True when a model is configured."""
        service = self.chat_service
        if service is None:
            return False

        async def apply() -> bool:
            service.apply_config()
            return bool(service.has_model())

        return bool(await self.runtime.submit(apply()))

    async def apply_config(self, config: Config | None = None) -> None:
        """Load the config (or take ``config``, the editor's save of this project) and
        apply it."""
        if self.session is None:
            return
        project: Path | None = self.window.project
        try:
            loaded = await self.runtime.submit(self.session.load(project, config))
        except Exception as exc:
            log.exception("loading the config failed")
            self.window.post_notice(Notice("error", f"Could not read the config: {exc}"))
            return
        self.model.set_scopes(loaded.scopes, loaded.sandboxes, loaded.sandbox_notes)
        self.model.set_order(loaded.order)
        has_model = False
        try:
            has_model = await self._sync_chat_config()
        except Exception:
            log.exception("the chat did not take the reloaded config")
        self._configured = bool(loaded.order) or has_model or self._has_models_in(loaded)
        self.window.servers.set_configured(len(loaded.order))
        if loaded.secrets_notice and loaded.secrets_notice != self._secrets_notice:
            self.window.post_notice(Notice("warning", loaded.secrets_notice))
        self._secrets_notice = loaded.secrets_notice
        shown = loaded.diagnostics[:MAX_DIAGNOSTIC_NOTICES]
        for text in shown:
            self.window.post_notice(Notice("warning" if "warning:" in text else "error", text))
        if len(loaded.diagnostics) > len(shown):
            more = len(loaded.diagnostics) - len(shown)
            self.window.post_notice(
                Notice("error", f"{more} more config problems; run `portico config check`.")
            )
        try:
            summary = await self.runtime.submit(self.session.apply())
        except Exception as exc:
            log.exception("applying the config failed")
            self.window.post_notice(Notice("error", f"Could not start the servers: {exc}"))
            return
        if not self.model.states():
            self.window.set_summary(live_summary([]))
        # The endpoint starts with the first apply that has endpoint.enabled on.
        self.tray.set_endpoint(await self.runtime.submit(self.session.endpoint_url()))
        trace("config applied")
        self.configApplied.emit(summary)

    # --- actions -------------------------------------------------------------------------

    def server_action(self, action: str, server: str) -> None:
        """Carry out one of ui/actions.py's actions (by its id) on ``server``."""
        act = ActionId(action)
        if act is ActionId.EDIT:
            self.open_config_editor(server)
            return
        if act is ActionId.ENABLE or act is ActionId.DISABLE:
            self.pages.set_enabled(server, act is ActionId.ENABLE)
        elif act is ActionId.REMOVE:
            self.pages.confirm_remove(server)
        elif act is ActionId.REVIEW_TRUST:
            self.pages.review_trust(server)
        else:
            calls: dict[ActionId, tuple[str, SessionCall]] = {
                ActionId.RESTART: ("Restart", lambda session, s: session.restart(s)),
                ActionId.RETRY: ("Retry", lambda session, s: session.retry(s)),
                ActionId.SIGN_IN: ("Sign in to", lambda session, s: session.authorize(s)),
            }
            verb, call = calls[act]
            self.ops.op(
                lambda: self._on_runtime(call, server), f"{verb} {server}", server=server
            ).run()

    async def _on_runtime(self, call: SessionCall, server: str) -> ServerState:
        if self.session is None or not self.runtime.is_running:
            raise NoRuntime("The server runtime is not running.")
        return await self.runtime.submit(call(self.session, server))

    def open_config_editor(self, server: str | None = None) -> None:
        """Show the config editor (one window, reused), optionally on ``server``."""
        from portico.ui.editor.window import ConfigEditorWindow

        project = self.window.project
        if self.editor is None:
            self.editor = ConfigEditorWindow(
                project,
                runtime=self.runtime,
                hooks=lambda: self.session.hub.hooks if self.session is not None else None,
                secrets=lambda: self.session.services.secrets if self.session else None,
            )
            self.editor.saved.connect(
                lambda _paths: self._spawn(self._apply_saved(), "Apply the saved config")
            )
        elif not self.editor.dirty:
            self.editor.open_project(project)  # pick up changes made elsewhere
        elif self.editor.project != project:
            self.editor.notice.setText(
                "The app now shows another project folder; save or reload these edits, "
                "then open the editor again to see its files."
            )
        self.editor.show()
        self.editor.raise_()
        self.editor.activateWindow()
        if server:
            self.editor.select(server)

    async def _apply_saved(self) -> None:
        """The editor saved: apply the config its save read (no second parse), when it
        edits the project the app shows."""
        editor = self.editor
        same = editor is not None and editor.project == self.window.project
        await self.apply_config(editor.saved_config if editor is not None and same else None)

    def toggle_window(self) -> None:
        if self.window.isVisible():
            self.window.save_state()
            self.window.hide()
        else:
            self.raise_window()

    def open_link(self, link: str) -> None:
        """A portico:// link (from the command line or another launch): show the window
        and ask before adding anything."""
        self.raise_window()
        self.links.open(link)

    def raise_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def _told_hidden(self) -> None:
        self.tray.notify(
            "Portico is still running",
            "Servers stay connected. Use the tray icon to open the window or to quit.",
            key="hidden-to-tray",
        )

    # --- quit ----------------------------------------------------------------------------

    def quit_asked(self) -> None:
        """Quit from the menu, the tray or the window: unsaved config edits are asked
        about first (Save / Discard / Cancel)."""
        if self.editor is not None and self.editor.dirty:
            self.editor.show()
            self.editor.raise_()
            self.editor.ask_unsaved(self.request_quit)
            return
        self.request_quit()

    def _card_icon(self, server: str, tool: str) -> QIcon | None:
        """A tool card's icon: the tool's announced one, else its server's (neither: the
        card shows no icon)."""
        state = self.model.state(server)
        if state is None:
            return None
        own = dict(state.tool_icons).get(tool)
        return (announced_icon(own) if own else None) or announced_icon(state.icon)

    def request_quit(self) -> None:
        if self._quit is not None:
            self._quit.set()

    async def shutdown(self) -> None:
        self.window.save_state()
        if self.session is not None and self.runtime.is_running:
            # Before calls are cancelled: their server-side tasks keep running, to be
            # followed again on the next start (runtime/tasks.py).
            await self.runtime.submit(self.session.detach_tasks())
        if self._pages is not None:
            self._pages.close()
        if self._chat is not None:
            self._chat.close()
        if self._onboarding is not None:
            self._onboarding.close()
        self.links.close()
        if self.editor is not None:
            await self.editor.finish()  # a save under way ends (bounded), then its ops stop
        await self.ops.drain()
        session, service = self.session, self.chat_service

        async def close() -> None:
            if service is not None:
                await service.close()
            if session is not None:
                await session.close()

        await self.runtime.shutdown(close if session is not None else None)
        self.tray.hide()
        self.window.hide()
        if self.instance is not None:
            self.instance.close()
        self.gc.stop()

    @staticmethod
    def _has_models_in(loaded: LoadResult) -> bool:
        return loaded.models > 0

    def _spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> None:
        self.ops.spawn(coro, what)


def main(
    argv: list[str] | None = None,
    *,
    open_url: str | None = None,
    hidden: bool = False,
    project: Path | None = None,
) -> int:
    trace("app imported")
    argv = list(sys.argv[:1] if argv is None else argv)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)  # the GUI thread must win the GIL (loop.py)
    app = ensure_application(argv)
    app.setApplicationName("Portico")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("org.portico.portico")  # resources/org.portico.portico.desktop
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    follow_os_scheme(app)  # dark mode follows the OS
    trace("QApplication")
    instance = SingleInstance()
    if not instance.acquire(url=open_url):
        return 0  # the running instance raised its window (and opens the link)
    trace("single instance")
    desktop = DesktopApp(app, instance, open_url=open_url, hidden=hidden, project=project)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        return runner.run(desktop.run())


if __name__ == "__main__":
    sys.exit(main())
