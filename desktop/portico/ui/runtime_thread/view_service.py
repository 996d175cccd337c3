"""The runtime side of shown MCP Apps views: one ViewSession per view on screen.

The GUI asks :meth:`ViewService.open` for a tool result that has a view and gets the page
to render (:class:`ViewOpened`); the view's messages come back through :meth:`message`
and Portico's go out through the ``deliver`` callback the GUI gave (called on this, the
runtime thread; the GUI hops). Every rule a view is held to is ``portico.apps.session``'s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from portico.apps.heights import FILE_NAME, ViewHeights
from portico.apps.resource import ViewCache, ViewUnavailable
from portico.apps.session import HostContext, ViewSession, sampler
from portico.config.model import DEFAULT_LIVE_VIEWS
from portico.paths import paths

if TYPE_CHECKING:
    from portico.policy.guard import ChatContext
    from portico.runtime.results import ToolResult
    from portico.ui.runtime_thread.page_service import PageService

_T = TypeVar("_T")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ViewOpened:
    """A view to render: its id (for :meth:`ViewService.message`), whose it is, the HTML,
    the policy its page gets, and the origins the page may load from or talk to."""

    id: str
    server: str
    uri: str
    html: str
    csp: str
    origins: tuple[str, ...]
    permissions: tuple[str, ...]
    policy_lines: tuple[str, ...]
    prefers_border: bool | None
    frames: tuple[str, ...] = ()  # the declared frameDomains: the only subframes it may load
    height: int | None = None  # the height the person last gave this view, if they did
    live_limit: int = DEFAULT_LIVE_VIEWS  # chat.live_views: views loaded at once in a chat


class ViewService:
    def __init__(self, pages: PageService) -> None:
        self.pages = pages
        self._caches: dict[str, ViewCache] = {}
        self._sessions: dict[str, ViewSession] = {}
        # (server, view uri, kind) -> the person's answer, for as long as Portico runs
        self._permissions: dict[tuple[str, str, str], bool] = {}
        self.heights: ViewHeights | None = None  # read on the first view opened
        self._heights_lock = asyncio.Lock()  # its file is read and written off the loop

    def _heights(self) -> ViewHeights:
        if self.heights is None:
            self.heights = ViewHeights(paths().state_dir / FILE_NAME)
        return self.heights

    def session(self, view_id: str) -> ViewSession | None:
        return self._sessions.get(view_id)

    async def open(
        self,
        qualified: str,
        arguments: dict[str, Any],
        result: ToolResult,
        deliver: Callable[[str], None],
        *,
        theme: str = "light",
        chat: ChatContext | None = None,
        on_message: Callable[[str], None] | None = None,
        on_display_mode: Callable[[str], None] | None = None,
        on_model_context: Callable[[dict[str, Any]], None] | None = None,
    ) -> ViewOpened:
        """The view of ``qualified``'s result, or ViewUnavailable saying why not.
        ``chat``: the chat the view is in (its spend and session approvals; Try it's own
        when None); the callbacks are the session's and run on this thread."""
        hub = self.pages.hub
        try:
            tool = hub.registry.resolve(qualified)
        except LookupError as exc:
            raise ViewUnavailable(str(exc)) from exc
        if tool.view is None or tool.view.resource_uri is None:
            raise ViewUnavailable(f"{qualified} has no view")
        connection = hub.connection(tool.server)
        cache = self._caches.setdefault(tool.server, ViewCache(tool.server))
        view = await cache.get(
            tool.view.resource_uri, connection.read_resource, generation=connection.generation
        )
        for line in view.csp.dropped:
            log.warning("%s", line)
        guard = self.pages.guard()
        loop = asyncio.get_running_loop()

        def open_url(url: str) -> None:
            loop.run_in_executor(None, webbrowser.open, url)

        session = ViewSession(
            view,
            send=lambda message: deliver(json.dumps(message)),
            registry=hub.registry,
            guard=guard,
            chat=chat if chat is not None else self.pages.direct_chat,
            read_resource=connection.read_resource,
            prompter=guard.prompter,
            open_url=open_url,
            tool=tool,
            host=HostContext(theme=theme),
            on_message=on_message,
            on_display_mode=on_display_mode,
            on_model_context=on_model_context,
            sample=sampler(self.pages.session.policy.sampling, connection.spec),
        )
        session.tool_input(arguments)
        session.tool_result(result)
        self._sessions[session.id] = session
        csp = view.csp
        height = await self._in_heights(lambda h: h.get(view.server, view.uri))
        return ViewOpened(
            id=session.id,
            server=view.server,
            uri=view.uri,
            html=view.html,
            csp=csp.header(),
            origins=tuple(dict.fromkeys(csp.connect + csp.resource + csp.frame)),
            permissions=view.permissions,
            policy_lines=tuple(csp.lines()),
            prefers_border=view.prefers_border,
            frames=csp.frame,
            height=height,
            live_limit=self._live_limit(),
        )

    def _live_limit(self) -> int:
        config = self.pages.session.config
        return config.settings.chat_live_views if config is not None else DEFAULT_LIVE_VIEWS

    async def remember_height(self, server: str, uri: str, height: int) -> int:
        """The person resized the view of ``server``'s ``uri``: its height from now on
        (brought within the limits), in every chat and after a restart."""
        return await self._in_heights(lambda h: h.set(server, uri, height))

    async def _in_heights(self, use: Callable[[ViewHeights], _T]) -> _T:
        """``use`` the heights file in a worker thread, one use at a time."""
        async with self._heights_lock:
            return await asyncio.to_thread(use, self._heights())

    async def message(self, view_id: str, text: str) -> None:
        """One message the view sent (JSON text); a view already closed is ignored."""
        session = self._sessions.get(view_id)
        if session is None:
            return
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        await session.handle(message)

    async def ask_permission(self, view_id: str, kind: str) -> bool:
        """The view's page asks for ``kind`` (camera, microphone, clipboard, ...): the
        person is asked once per view (its server and resource) while Portico runs."""
        session = self._sessions.get(view_id)
        if session is None:
            return False
        key = (session.view.server, session.view.uri, kind)
        if key not in self._permissions:
            self._permissions[key] = await session.ask_permission(kind)
        return self._permissions[key]

    async def set_display_mode(self, view_id: str, mode: str) -> None:
        """The face changed the view's mode itself (its window was closed): tell it."""
        session = self._sessions.get(view_id)
        if session is not None and session.host.display_mode != mode:
            session.context_changed(display_mode=mode)

    async def close(self, view_id: str, reason: str = "the view was closed") -> None:
        session = self._sessions.pop(view_id, None)
        if session is not None:
            await session.teardown(reason)
