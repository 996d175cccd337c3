"""The endpoint's MCP server: the hub's servers as one, every call through the ToolGuard.

Built on the SDK's low-level ``Server`` (both protocol revisions; sessions and the
2026-07-28 per-request era are the SDK's). What a client sees:

- ``tools/list``: every registered tool under its ``server__tool`` name, filters
  applied; when the registry defers tools (``defer_tools``) only the always-loaded ones,
  those this client loaded through ``tool_search``, and ``tool_search`` itself;
- ``tools/call``: ``ToolGuard.call`` with a :class:`CallContext` whose caller is
  ``Caller("client", NAME)``, so approvals (with the exact arguments) go to this
  process's Prompter naming the client, a client's costed calls count against its own
  spend totals, and a backend failure comes back as a tool error, never a dropped
  connection;
- ``resources/*`` and ``prompts/*``: the running servers' own, prompts prefixed like
  tools; a resource keeps its URI and is read from the server that listed it. A URI no
  visible server listed and no visible template matches is refused (a client reads only
  what it was shown); ``resources/subscribe`` follows the same rule;
- ``completion/complete`` goes to the server of the prompt or template; ``logging/setLevel``
  sets which of the servers' log lines a handshake-era session hears;
- a client's **profile** (``Client.servers`` / ``Client.tools``) limits every list, and a
  call, read or prompt outside it is refused as if the name did not exist;
- what servers send between and during calls is forwarded (``forwarding.py``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError

from portico import __version__
from portico.gateway import convert
from portico.gateway.access import client_of
from portico.gateway.activity import ClientActivity, ClientExchange
from portico.gateway.clients import Client
from portico.gateway.forwarding import Forwarder, Leg, deprecated_ok
from portico.gateway.input_rounds import HeldCall, StateRefused
from portico.gateway.uri_template import matches
from portico.policy.guard import ChatContext, Refusal
from portico.prompts import Caller
from portico.runtime.call_context import CallContext
from portico.runtime.errors import describe
from portico.runtime.events import Status
from portico.runtime.naming import SEPARATOR
from portico.runtime.toolsearch import TOOL_SEARCH, ActiveSet

if TYPE_CHECKING:
    from portico.policy.guard import ToolGuard
    from portico.runtime.connection import Connection
    from portico.runtime.hub import Hub

log = logging.getLogger(__name__)

Ctx = ServerRequestContext[Any, Any]
_LIVE = (Status.RUNNING, Status.LAZY)


class _Server(Server[Any]):
    """The SDK's server announcing list changes to handshake-era clients (they are
    forwarded from the backends; the SDK's default announces none)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        return super().create_initialization_options(
            notification_options or NotificationOptions(True, True, True),
            experimental_capabilities,
            extensions,
        )


@dataclass
class ClientState:
    """What the endpoint keeps per client while this process runs."""

    chat: ChatContext
    active: ActiveSet = field(default_factory=ActiveSet)


class Gateway:
    """The hub and guard as one MCP server (see the module's docstring)."""

    def __init__(self, hub: Hub, guard: ToolGuard, activity: ClientActivity | None = None) -> None:
        self.hub = hub
        self.guard = guard
        self.activity = activity or ClientActivity()
        self._clients: dict[str, ClientState] = {}
        self._resource_owner: dict[str, str] = {}  # uri -> server that listed it
        self._templates: dict[str, list[str]] = {}  # server -> its URI templates, last listed
        self.forwarder = Forwarder(hub.bus)
        with deprecated_ok():  # logging/setLevel: still what 2025-11-25 clients send
            self.server: Server[Any] = _Server(
                "portico",
                version=__version__,
                instructions="Portico: the person's MCP servers, under their approvals.",
                # 2026-07-28 calls check their Mcp-Param headers against the tool's schema;
                # without this the SDK runs the whole tools/list handler for every call.
                get_tool_input_schema=self.input_schema,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_list_resources=self._list_resources,
                on_list_resource_templates=self._list_templates,
                on_read_resource=self._read_resource,
                on_subscribe_resource=self._subscribe,
                on_unsubscribe_resource=self._unsubscribe,
                on_subscriptions_listen=ListenHandler(self.forwarder.listen_bus),
                on_list_prompts=self._list_prompts,
                on_get_prompt=self._get_prompt,
                on_completion=self._complete,
                on_set_logging_level=self._set_level,
            )

    # --- clients -------------------------------------------------------------------

    def state(self, client: Client) -> ClientState:
        held = self._clients.get(client.name)
        if held is None:
            held = self._clients[client.name] = ClientState(ChatContext(f"client-{client.name}"))
        return held

    def _client(self, ctx: Ctx) -> Client:
        client = client_of(ctx.request)
        if client is None:  # the access gate lets no request through without one
            raise MCPError(-32600, "no client identified for this request")
        self.forwarder.seen(ctx, client)
        return client

    def _record(
        self, client: Client, method: str, target: str, outcome: str, started: float
    ) -> None:
        self.activity.record(
            ClientExchange(
                time.time(), client.name, method, target, outcome, time.monotonic() - started
            )
        )

    # --- tools ---------------------------------------------------------------------

    def input_schema(self, name: str) -> dict[str, Any] | None:
        try:
            return self.hub.registry.resolve(name).input_schema
        except LookupError:
            return None  # tool_search, or a name the call will refuse with a reason

    async def _list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self.list_tools(self._client(ctx))

    def list_tools(self, client: Client) -> types.ListToolsResult:
        """The tools ``client`` sees (both the SDK's handler and the fast path's)."""
        registry = self.hub.registry
        started = time.monotonic()
        offered: list[types.Tool] = []
        if registry.deferring():
            active = self.state(client).active
            for t in registry.tools():
                spec = registry.spec(t.server)
                loaded = (spec and spec.always_load) or t.qualified in active
                if (
                    not t.utility
                    and t.for_model
                    and loaded
                    and client.sees_tool(t.server, t.qualified)
                ):
                    offered.append(convert.tool(t))
            offered += [
                convert.model_tool(m) for m in registry.model_tools(active) if m.name == TOOL_SEARCH
            ]
        else:
            offered = [
                convert.tool(t)
                for t in registry.tools()
                if t.for_model and not t.utility and client.sees_tool(t.server, t.qualified)
            ]
        self._record(client, "tools/list", "", f"ok ({len(offered)} tools)", started)
        return types.ListToolsResult(tools=offered)

    async def _call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        return await self.call_tool(self._client(ctx), params, Leg.of(ctx))

    async def call_tool(
        self, client: Client, params: types.CallToolRequestParams, leg: Leg
    ) -> types.CallToolResult | types.InputRequiredResult:
        """One ``tools/call`` of ``client`` (both the SDK's handler and the fast path's)."""
        rounds = self.forwarder.rounds
        if params.request_state is not None:  # a 2026-07-28 retry: the held call goes on
            try:
                held = rounds.resume(
                    client.name, params.name, params.request_state, params.input_responses
                )
            except StateRefused as refused:
                self._record(client, "tools/call", params.name, refused.outcome, time.monotonic())
                raise MCPError(-32602, str(refused)) from None
            for entry in self.forwarder.entries_of(held):
                entry.leg = leg  # log lines and progress go on the newest leg
            return await rounds.next(held)
        state = self.state(client)
        started = time.monotonic()
        server = self._server_of(params.name)
        if (
            params.name != TOOL_SEARCH
            and (server is None or not client.sees_tool(server, params.name))
            and client.limited
        ):
            # a hidden tool is as unknown as a name that does not exist
            self._record(client, "tools/call", params.name, "refused: not in the profile", started)
            return convert.error_result(f"Unknown tool: {params.name!r}")
        if server is not None and not leg.can_send_request and leg.can_be_asked():
            # no back-channel (2026-07-28): what the backend asks goes in input-required
            # results, the call held across the client's retries
            held = HeldCall(client.name, params.name)
            run = self._guarded(leg, client, state, params, server, started, held)
            return await rounds.next(rounds.start(client.name, run, held))
        return await self._guarded(leg, client, state, params, server, started, None)

    async def _guarded(
        self,
        leg: Leg,
        client: Client,
        state: ClientState,
        params: types.CallToolRequestParams,
        server: str | None,
        started: float,
        held: HeldCall | None,
    ) -> types.CallToolResult:
        before = len(state.active)
        try:
            with self.forwarder.calling(server, leg, client, held) as entry:
                # a held call's retries are new legs (calling() keeps the newest in entry)
                progress = _progress_to(lambda: entry.leg if entry is not None else leg, held)
                context = CallContext(Caller("client", client.name), progress=progress)
                result = await self.guard.call(
                    state.chat, params.name, params.arguments, context=context, active=state.active
                )
        except Exception as exc:  # a backend that died or timed out: a tool error
            text = describe(exc)
            self._record(client, "tools/call", params.name, f"error: {text}", started)
            return convert.error_result(f"Calling '{params.name}' failed: {text}")
        outcome: str
        if isinstance(result, Refusal):
            outcome = result.reason
        else:
            outcome = "error" if result.is_error else "ok"
        self._record(client, "tools/call", params.name, outcome, started)
        if params.name == TOOL_SEARCH and len(state.active) != before and leg.ctx is not None:
            with contextlib.suppress(Exception):  # a stateless request has nowhere to send it
                await leg.ctx.session.send_tool_list_changed()
        return convert.call_result(result)

    def _server_of(self, name: str) -> str | None:
        try:
            return self.hub.registry.resolve(name).server
        except LookupError:
            return None

    # --- resources -----------------------------------------------------------------

    def _live(self, capability: str, client: Client | None = None) -> list[Connection]:
        out: list[Connection] = []
        for name in self.hub.registry.servers():
            if client is not None and not client.sees_server(name):
                continue
            conn = self.hub.connections.get(name)
            if conn is None or conn.state.status not in _LIVE:
                continue
            caps = conn.capabilities
            if caps is not None and getattr(caps, capability, None) is not None:
                out.append(conn)
        return out

    async def _each(
        self, capability: str, fetch: Callable[[Connection], Any], client: Client
    ) -> list[tuple[Connection, Any]]:
        found: list[tuple[Connection, Any]] = []
        for conn in self._live(capability, client):
            try:
                found.append((conn, await fetch(conn)))
            except Exception as exc:  # one server's failure leaves the others listed
                log.info("gateway: %s of %s failed: %s", capability, conn.name, describe(exc))
        return found

    async def _list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        client = self._client(ctx)
        started = time.monotonic()
        out: list[types.Resource] = []
        for conn, items in await self._each("resources", lambda c: c.list_resources(), client):
            for item in items:
                uri = str(item.uri)
                self._resource_owner.setdefault(uri, conn.name)
                out.append(types.Resource.model_validate(item.model_dump(by_alias=True)))
        self._record(client, "resources/list", "", f"ok ({len(out)})", started)
        return types.ListResourcesResult(resources=out)

    async def _list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        client = self._client(ctx)
        out: list[types.ResourceTemplate] = []
        found = await self._each("resources", lambda c: c.list_resource_templates(), client)
        for conn, items in found:
            self._templates[conn.name] = [str(t.uri_template) for t in items]
            out += [
                types.ResourceTemplate.model_validate(t.model_dump(by_alias=True)) for t in items
            ]
        return types.ListResourceTemplatesResult(resource_templates=out)

    async def _offering(self, client: Client, uri: str) -> list[Connection]:
        """The visible servers that showed ``uri`` to a client: listed it, or have a
        template it matches. Empty: the client was never shown it."""
        live = self._live("resources", client)
        listed = [c for c in live if any(str(r.uri) == uri for r in c.resources or [])]
        if listed:
            return listed
        out: list[Connection] = []
        for conn in live:
            if any(matches(t, uri) for t in await self._templates_of(conn)):
                out.append(conn)
        return out

    async def _templates_of(self, conn: Connection) -> list[str]:
        if conn.name not in self._templates:
            try:
                items = await conn.list_resource_templates()
            except Exception as exc:
                log.info("gateway: templates of %s: %s", conn.name, describe(exc))
                return []
            self._templates[conn.name] = [str(t.uri_template) for t in items]
        return self._templates[conn.name]

    async def _read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        client = self._client(ctx)
        started = time.monotonic()
        uri = str(params.uri)
        offering = await self._offering(client, uri)
        owner = self._resource_owner.get(uri)
        candidates = [c for c in offering if owner in (None, c.name)] or offering
        if not candidates:
            self._record(client, "resources/read", uri, "refused: never shown", started)
            raise MCPError(
                -32002, f"Resource not found: {uri!r} is offered by none of your servers"
            )
        last: Exception | None = None
        for conn in candidates:
            try:
                result = await conn.read_resource(uri)
            except Exception as exc:
                last = exc
                continue
            self._record(client, "resources/read", uri, "ok", started)
            return types.ReadResourceResult.model_validate(result.model_dump(by_alias=True))
        text = describe(last) if last is not None else "not found"
        self._record(client, "resources/read", uri, f"error: {text}", started)
        raise MCPError(-32002, f"reading {uri!r} failed: {text}")

    async def _subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        client = self._client(ctx)
        uri = str(params.uri)
        offering = await self._offering(client, uri)
        if not offering:
            self._record(
                client, "resources/subscribe", uri, "refused: never shown", time.monotonic()
            )
            raise MCPError(
                -32002, f"Resource not found: {uri!r} is offered by none of your servers"
            )
        watched = self.forwarder.seen(ctx, client)
        if watched is not None:
            watched.uris.add(uri)
        for conn in offering:
            try:
                await conn.subscribe(uri)
            except Exception as exc:
                log.info("gateway: subscribing %s to %s failed: %s", conn.name, uri, describe(exc))
        self._record(client, "resources/subscribe", uri, "ok", time.monotonic())
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: Ctx, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        # The backend subscription stays: the app (or another client) may hold it too, and
        # an update nobody asked for is simply not passed on.
        client = self._client(ctx)
        watched = self.forwarder.seen(ctx, client)
        if watched is not None:
            watched.uris.discard(str(params.uri))
        return types.EmptyResult()

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        client = self._client(ctx)
        watched = self.forwarder.seen(ctx, client)
        if watched is not None:
            watched.level = str(params.level)
        return types.EmptyResult()

    async def _complete(
        self, ctx: Ctx, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        client = self._client(ctx)
        ref = params.ref
        conn: Connection | None = None
        if isinstance(ref, types.PromptReference):
            server, sep, name = ref.name.partition(SEPARATOR)
            found = self.hub.connections.get(server) if sep and client.sees_server(server) else None
            conn = found if found is not None and found.state.status in _LIVE else None
            ref = types.PromptReference(type="ref/prompt", name=name)
        else:
            uri = str(ref.uri)
            for candidate in self._live("resources", client):
                if uri in await self._templates_of(candidate):
                    conn = candidate
                    break
        if conn is None:
            return types.CompleteResult(completion=types.Completion(values=[]))
        argument = {params.argument.name: params.argument.value}
        context = dict(params.context.arguments or {}) if params.context else None
        target = conn
        try:
            # one request on the live session, renewed if forgotten (connection_calls.py)
            result = await target.calls.request(
                "completion/complete",
                lambda c: c.complete(ref, argument, context),
            )
        except Exception as exc:
            log.info("gateway: completion from %s failed: %s", target.name, describe(exc))
            return types.CompleteResult(completion=types.Completion(values=[]))
        return types.CompleteResult.model_validate(result.model_dump(by_alias=True))

    # --- prompts -------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        client = self._client(ctx)
        started = time.monotonic()
        out: list[types.Prompt] = []
        for conn, items in await self._each("prompts", lambda c: c.list_prompts(), client):
            for item in items:
                data = item.model_dump(by_alias=True)
                data["name"] = f"{conn.name}{SEPARATOR}{item.name}"
                out.append(types.Prompt.model_validate(data))
        self._record(client, "prompts/list", "", f"ok ({len(out)})", started)
        return types.ListPromptsResult(prompts=out)

    async def _get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        client = self._client(ctx)
        started = time.monotonic()
        server, sep, name = params.name.partition(SEPARATOR)
        conn = self.hub.connections.get(server) if sep and client.sees_server(server) else None
        if conn is None or conn.state.status not in _LIVE:
            self._record(client, "prompts/get", params.name, "error: no server", started)
            raise MCPError(
                -32602,
                f"no running server for the prompt {params.name!r} (names are server__prompt)",
            )
        try:
            result = await conn.get_prompt(name, dict(params.arguments or {}) or None)
        except Exception as exc:
            text = describe(exc)
            self._record(client, "prompts/get", params.name, f"error: {text}", started)
            raise MCPError(-32603, f"getting the prompt {params.name!r} failed: {text}") from exc
        self._record(client, "prompts/get", params.name, "ok", started)
        return types.GetPromptResult.model_validate(result.model_dump(by_alias=True))


def _progress_to(
    live: Callable[[], Leg], held: HeldCall | None
) -> Callable[[float, float | None, str | None], Any] | None:
    """Forward the backend's progress to the call's live leg, if that leg asked for
    progress. A held call's retries are new requests, each with its own token (or none),
    so the backend reports whenever the call is held and each report finds its leg."""
    if held is None and _token(live().ctx) is None:
        return None

    async def report(progress: float, total: float | None, message: str | None) -> None:
        ctx = live().ctx
        token = _token(ctx)
        if ctx is None or token is None:
            return
        with contextlib.suppress(Exception):
            await ctx.session.send_progress_notification(
                token, progress, total, message, related_request_id=str(ctx.request_id)
            )

    return report


def _token(ctx: Ctx | None) -> Any:
    """The progress token a request asked for progress with; None: it did not."""
    meta: Any = (ctx.meta if ctx is not None else None) or {}
    return meta.get("progress_token", meta.get("progressToken")) if hasattr(meta, "get") else None
