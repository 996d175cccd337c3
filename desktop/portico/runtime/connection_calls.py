"""A connection's feature part: requests on the live session (tool calls first).

Calls run in the caller's task against the owner task's client, so cancelling the caller
cancels the call (the SDK tells the server). A call to a lazy, recycled or reconnecting
server waits for the owner to bring the session up (:meth:`Calls.live_client`); a
request the server refused because it forgot the session is sent once more on a new one;
a failure is reworded (a dead stdio server becomes ``ServerExited``). The part counts the
calls in flight (recycling watches them) and arms each call's timeout, which progress
notifications extend.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from portico.config.model import ServerSpec
from portico.runtime import activity, legacy_tasks, sdklog, url_elicitation
from portico.runtime.call_context import CallContext
from portico.runtime.connection_logging import ServerLogging
from portico.runtime.connection_tasks import CallTasks
from portico.runtime.deadlines import LazyDeadlines
from portico.runtime.errors import (
    CONNECTION_CLOSED,
    CallTimeout,
    HttpErrorRecorder,
    HttpErrorResponse,
    NeedsAuth,
    RuntimeFailure,
    ServerExited,
    describe,
)
from portico.runtime.events import ServerState, Status
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.lifecycle import Lifecycle, Phase
from portico.runtime.serverlog import ServerLog
from portico.runtime.session_renewal import forgotten
from portico.runtime.task_events import TaskGone, TaskHandover

if TYPE_CHECKING:
    from mcp import Client

    from portico.runtime.transports.stdio import StdioProcessInfo

T = TypeVar("T")

PROGRESS_EXTENSION_CAP = 10.0  # progress may stretch a call to 10x its timeout
STDERR_TAIL_LINES = 10


class Offered(Protocol):
    """What the server offers, as the calls read it (the connection's lists)."""

    @property
    def tools(self) -> list[Any]: ...

    @property
    def protocol_version(self) -> str | None: ...

    @property
    def capabilities(self) -> Any: ...


@dataclasses.dataclass(frozen=True)
class Session:
    """The calls' view of the session the connection's owner task holds."""

    spec: Callable[[], ServerSpec]  # the current spec (a reload may replace it)
    life: Lifecycle
    client: Callable[[], Client | None]  # the live client; None unless connected
    proc: Callable[[], StdioProcessInfo | None]  # the stdio process, if any
    state: Callable[[], ServerState]
    started: Callable[[], bool]  # the owner task runs
    go_live: Callable[[], None]  # asks a lazy server's owner to connect
    renew: Callable[[HttpErrorResponse], None]  # the server forgot the session


class Calls:
    """One server's requests: in flight, timed, renewed, reworded."""

    def __init__(
        self,
        session: Session,
        offered: Offered,
        tasks: CallTasks,
        *,
        hooks: ConnectionHooks,
        log: ServerLog,
        recorder: HttpErrorRecorder,
        server_logging: ServerLogging,
        note: Callable[[str], None],
    ) -> None:
        self._session = session
        self._life = session.life
        self._offered = offered
        self._tasks = tasks
        self._hooks = hooks
        self._log = log
        self._recorder = recorder
        self._server_logging = server_logging
        self._note = note
        # Recycling watches the calls: how many run, when the last began or ended.
        self._inflight = 0
        self.activity = asyncio.Event()  # set whenever a call begins or ends
        self.last_activity = time.monotonic()
        self._deadlines = LazyDeadlines()  # the running calls' timeouts (deadlines.py)
        self.url_elicitations = url_elicitation.Completions()  # elicitation/complete heard

    @property
    def _spec(self) -> ServerSpec:
        return self._session.spec()

    @property
    def _name(self) -> str:
        return self._session.spec().name

    @property
    def inflight(self) -> int:
        """How many requests run now."""
        return self._inflight

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        context: CallContext | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> Any:
        """Call a tool; starts a lazy or recycled server first. Returns CallToolResult.
        ``context``: the caller's (progress, the task the call may become)."""
        client = self._session.client()
        if client is None or self._session.state().status is not Status.RUNNING:
            client = await self.live_client()
        limit = self._spec.timeout if timeout is None else timeout
        mark = self.begin()

        first = [(client, mark)]

        async def call() -> Any:  # again after a URL elicitation: on the session of then
            live, since = first.pop() if first else (await self.live_client(), self._recorder.count)
            try:
                return await self._timed_call(live, name, arguments, context, limit, since)
            except Exception as exc:  # the server forgot the session: once more on a new one
                live, since = await self._renewed(live, since, exc)
                return await self._timed_call(live, name, arguments, context, limit, since)

        async def satisfy(needed: list[Any]) -> None:  # -32042: the person opens a page
            factory = self._hooks.elicitation_callback
            await url_elicitation.satisfy(
                self._name,
                name,
                needed,
                ask=factory(self._spec) if factory is not None else None,
                completions=self.url_elicitations,
                timeout=self._spec.elicitation.timeout,
                note=self._note,
            )

        asker = (
            activity.calling(context.caller.describe())
            if context is not None
            else contextlib.nullcontext()
        )
        try:
            with sdklog.bind(self._log), asker:  # the server's Activity names the caller
                return await url_elicitation.calling(call, satisfy)
        finally:
            self.end()

    async def request(self, what: str, send: Callable[[Client], Awaitable[T]]) -> T:
        """One request on the live client, sent once more on a new session when the server
        forgot the old one; failures reworded."""
        client = await self.live_client()
        mark = self.begin()
        try:
            try:
                return await send(client)
            except Exception as exc:
                client, mark = await self._renewed(client, mark, exc)
                return await send(client)
        except Exception as exc:
            raise await self.failure(exc, what, mark) from exc
        finally:
            self.end()

    async def follow_task(
        self, tool: str, task_id: str, *, context: CallContext | None = None
    ) -> Any:
        """Follow a task this server created earlier (before a restart) to its
        CallToolResult; ``TaskGone`` when the server no longer has it."""
        client = await self.live_client()
        self._tasks.offered(self._offered.capabilities, task_id)
        mark = self.begin()
        try:
            with sdklog.bind(self._log):
                return await self._tasks.follow(client, tool, task_id, context)
        except TaskGone:
            raise
        except Exception as exc:
            raise await self.failure(exc, f"tasks/get {task_id}", mark) from exc
        finally:
            self.end()

    async def _renewed(self, client: Client, mark: int, exc: Exception) -> tuple[Client, int]:
        """After a failed request: raise ``exc`` unless every error answer since ``mark``
        says the server no longer knows the session (so the request was not processed);
        then have the owner start a new session and return its client and a new mark."""
        stale = forgotten(self._recorder, mark)
        if stale is None:
            raise exc
        if self._session.client() is client and self._life.phase is Phase.RUNNING:
            self._session.renew(stale)
        try:
            async with asyncio.timeout(self._spec.connect_timeout + 5.0):
                while self._session.client() is client:  # the owner closes the old one first
                    await self._life.changed()
        except TimeoutError as late:
            raise RuntimeFailure(
                f"{self._name}: the server forgot the session and the old one did not close in time"
            ) from late
        return await self.live_client(), self._recorder.count

    async def _timed_call(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any] | None,
        context: CallContext | None,
        limit: float,
        mark: int,
    ) -> Any:
        report = context.progress if context is not None else None
        loop = asyncio.get_running_loop()
        hard_stop = loop.time() + limit * PROGRESS_EXTENSION_CAP
        try:
            async with asyncio.timeout(None) as deadline:  # armed if the call runs on
                self._deadlines.add(deadline, loop.time() + limit)

                async def on_progress(
                    progress: float, total: float | None, message: str | None
                ) -> None:
                    deadline.reschedule(min(loop.time() + limit, hard_stop))
                    if report is not None:
                        outcome = report(progress, total, message)
                        if asyncio.iscoroutine(outcome):
                            await outcome

                try:
                    try:
                        offered = self._offered
                        tool = next((t for t in offered.tools if t.name == name), None)
                        if legacy_tasks.requires_task(tool, offered.protocol_version):
                            return await legacy_tasks.call_as_task(
                                client, name, arguments or {}, on_progress
                            )
                        return await client.call_tool(
                            name,
                            arguments or {},
                            progress_callback=on_progress,
                            meta=self._server_logging.call_meta(offered.protocol_version),
                        )
                    except TaskHandover as handover:  # the call became a task: follow it

                        def alive() -> None:  # a task that answers a poll is alive
                            deadline.reschedule(loop.time() + limit)

                        return await self._tasks.follow_handle(
                            client, name, handover, context, alive
                        )
                except Exception as exc:
                    raise await self.failure(exc, f"tools/call {name}", mark) from exc
                finally:
                    self._deadlines.discard(deadline)
        except TimeoutError as exc:
            if deadline.expired():
                raise CallTimeout(
                    f"{self._name}: tool {name!r} gave no result within {limit:g} s"
                    " (timeout; progress notifications extend it up to"
                    f" {limit * PROGRESS_EXTENSION_CAP:g} s); the call was cancelled"
                ) from exc
            raise

    def begin(self) -> int:
        """A request starts: returns the mark of the HTTP errors heard before it."""
        self._inflight += 1
        self.last_activity = time.monotonic()
        self.activity.set()
        return self._recorder.count

    def end(self) -> None:
        self._inflight -= 1
        self.last_activity = time.monotonic()
        self.activity.set()

    async def live_client(self) -> Client:
        """The running client, starting a lazy or recycled server on the way."""
        session, life = self._session, self._life
        client = session.client()
        if client is not None and session.state().status is Status.RUNNING:
            return client
        if not session.started():
            if life.phase is Phase.DISABLED:
                raise RuntimeFailure(f"{self._name} is disabled in the config")
            raise RuntimeFailure(f"{self._name} is not started")
        try:
            async with asyncio.timeout(self._spec.connect_timeout + 5.0):
                while True:
                    phase = life.phase
                    client = session.client()
                    if phase is Phase.RUNNING and client is not None:
                        return client
                    if phase is Phase.LAZY:
                        session.go_live()
                    elif life.settled and phase is not Phase.RUNNING:
                        raise RuntimeFailure(self._not_running(session.state()))
                    # Starting / Connecting, or Running while a recycled process winds down.
                    await life.changed()
        except TimeoutError as exc:
            raise RuntimeFailure(f"{self._name} did not start in time") from exc

    async def _owner_verdict(self, wait: float = 3.0) -> str | None:
        """The error the owner task records after a lost connection, if any soon."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                while self._life.phase in (Phase.RUNNING, Phase.CONNECTING, Phase.STARTING):
                    await self._life.changed()
        state = self._session.state()
        if state.status in (Status.FAILED, Status.COOLDOWN, Status.NEEDS_AUTH):
            return state.error
        return None

    def _not_running(self, state: ServerState) -> str:
        text = f"{self._name} is not running ({state.status.value}"
        if state.error:
            text += f": {state.error}"
        if state.retry_at is not None:
            text += f"; next try at {time.strftime('%H:%M:%S', time.localtime(state.retry_at))}"
        return text + ")"

    async def failure(self, exc: Exception, what: str, mark: int = 0) -> Exception:
        """Reword a failed request; a dead stdio server becomes ServerExited."""
        from mcp import MCPError

        if isinstance(exc, MCPError) and exc.error is not None:
            code = exc.error.code
            proc = self._session.proc()
            spec = self._spec
            if code == CONNECTION_CLOSED and proc is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(3.0):
                        await proc.exited.wait()
                if proc.exited.is_set() and not proc.closing:
                    return ServerExited(
                        self._name, proc.returncode, self._log.stderr_tail(STDERR_TAIL_LINES)
                    )
            elif (
                code == CONNECTION_CLOSED
                and spec.is_remote
                and exc.error.message == "Connection closed"
            ):
                # The transport died; the owner task learns why (an exception group).
                lost = await self._owner_verdict()
                if lost is not None and self._session.state().status is Status.NEEDS_AUTH:
                    return NeedsAuth(lost)
                if lost is not None:
                    return RuntimeFailure(f"{self._name}: {what}: connection lost: {lost}")
            text = describe(
                exc, recorder=self._recorder, transport=spec.transport.value, since=mark
            )
            if text != exc.error.message:
                return RuntimeFailure(f"{self._name}: {what}: {text}")
        return exc
