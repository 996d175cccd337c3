"""One shown view talking to Portico: the host side of the MCP Apps JSON-RPC.

The face that renders the view carries its messages both ways (``handle`` for what the
view sends, ``send`` for what Portico sends it) and nothing else; every rule is here:

- nothing is sent to the view before it says ``ui/notifications/initialized``; what the
  host has to say before then (the tool's input and result) waits and goes in order;
- ``tools/call`` reaches only the view's own server, only tools offered to views, and
  always through the person's ToolGuard as the view's own call (approvals with the
  exact arguments, spend, the question naming the view);
- ``resources/read`` reads only its own server; ``ui/open-link`` asks first (the URL
  question a server's link gets), ``ui/message`` and ``ui/update-model-context`` go to
  the chat the view is in, when there is one;
- a malformed message gets a JSON-RPC error, never an exception in the face.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from portico.config.model import ServerSpec
from portico.policy.ask import ask_outcome
from portico.policy.guard import ChatContext
from portico.policy.sampling import SamplingPolicy
from portico.policy.url_review import review_url
from portico.prompts import Caller, ElicitationRequest, Prompter
from portico.runtime.activity import calling
from portico.runtime.call_context import CallContext
from portico.runtime.registry import RegisteredTool
from portico.runtime.results import ToolResult
from portico.runtime.tool_views import SPEC_VERSION

from .resource import ViewResource
from .wire import call_tool_result

log = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
DENIED = -32000
DISPLAY_MODES = ("inline", "fullscreen", "pip")
LINK_TIMEOUT = 300.0  # seconds the open-link question waits
PERMISSION_TIMEOUT = 300.0  # seconds a permission question waits
# what the engine asks for -> how the person is asked about it
PERMISSION_WORDS = {
    "camera": "your camera",
    "microphone": "your microphone",
    "camera and microphone": "your camera and microphone",
    "clipboard": "your clipboard (to read and write it)",
    "geolocation": "your location",
}
_ids = itertools.count(1)

Message = dict[str, Any]


class ViewTools(Protocol):
    """What a view session needs of the tool registry (``runtime.registry.Registry``)."""

    def server_tools(self, server: str) -> list[RegisteredTool]: ...


class ViewGuard(Protocol):
    """``policy.guard.ToolGuard``: the one way a view's tool call runs."""

    async def call(
        self,
        chat: ChatContext,
        qualified: str,
        arguments: Mapping[str, Any] | None,
        *,
        context: CallContext | None = None,
    ) -> ToolResult: ...


@dataclass(frozen=True)
class HostContext:
    """What the view is told about where it is shown (``hostContext``)."""

    theme: str = "light"
    display_mode: str = "inline"
    available_modes: tuple[str, ...] = DISPLAY_MODES
    locale: str = "en-US"
    time_zone: str = "UTC"
    max_height: int = 600
    width: int | None = None
    variables: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        dims: dict[str, int] = {"maxHeight": self.max_height}
        if self.width is not None:
            dims["width"] = self.width
        out: dict[str, Any] = {
            "theme": self.theme,
            "displayMode": self.display_mode,
            "availableDisplayModes": list(self.available_modes),
            "containerDimensions": dims,
            "locale": self.locale,
            "timeZone": self.time_zone,
            "platform": "desktop",
            "userAgent": "Portico",
        }
        if self.variables:
            out["styles"] = {"variables": dict(self.variables)}
        return out


_DECLARED = {"clipboard": "clipboardWrite"}  # the engine's kind -> the declared name


def permission_declared(kind: str, permissions: tuple[str, ...]) -> bool:
    """The engine's ``kind`` (a :data:`PERMISSION_WORDS` key) is among the permissions
    the view's resource declared (``_meta.ui.permissions``), every part of it."""
    return all(_DECLARED.get(part, part) in permissions for part in kind.split(" and "))


def sampler(
    sampling: SamplingPolicy, spec: ServerSpec
) -> Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]] | None:
    """A view's ``sampling/createMessage`` through its server's sampling policy (its
    limits and the person's review, as the server's own requests); None when the server's
    sampling is off."""
    if not spec.sampling.enabled:
        return None

    async def sample(params: Mapping[str, Any]) -> dict[str, Any]:
        from mcp import types
        from pydantic import ValidationError

        try:
            request = types.CreateMessageRequestParams.model_validate(dict(params))
        except ValidationError as exc:
            raise SamplingRefused(INVALID_PARAMS, f"sampling/createMessage: {exc}") from exc
        out = await sampling.handle(spec, request)
        if isinstance(out, types.ErrorData):
            raise SamplingRefused(out.code, out.message)
        dumped: dict[str, Any] = out.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped

    return sample


class SamplingRefused(Exception):
    """The sampling review refused a view's request: ``code`` and message go back to it."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class ViewCalls:
    """What the view did (a face's status line and the tests read it)."""

    tools: list[str] = field(default_factory=list)  # qualified names, in order
    refused: list[str] = field(default_factory=list)  # why each refused request was


class ViewSession:
    """The host side of one shown view (see the module docstring)."""

    def __init__(
        self,
        view: ViewResource,
        *,
        send: Callable[[Message], None],
        registry: ViewTools,
        guard: ViewGuard,
        chat: ChatContext,
        read_resource: Callable[[str], Awaitable[Any]],
        prompter: Prompter,
        open_url: Callable[[str], None],
        tool: RegisteredTool | None = None,
        host: HostContext | None = None,
        on_message: Callable[[str], None] | None = None,
        on_display_mode: Callable[[str], None] | None = None,
        on_model_context: Callable[[dict[str, Any]], None] | None = None,
        sample: Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]] | None = None,
        host_version: str = "",
    ) -> None:
        """``sample``: runs a ``sampling/createMessage`` the view sends through the
        server's sampling review (raises :class:`SamplingRefused`); None: views of this
        server cannot sample (its sampling is off)."""
        self.view = view
        self.id = f"view-{next(_ids)}"
        self.caller = Caller("view", self.id, server=view.server, view=view.uri)
        self.host = host or HostContext()
        self.model_context: dict[str, Any] | None = None  # the last ui/update-model-context
        self.calls = ViewCalls()
        self.initialized = False
        self.app_modes: tuple[str, ...] = ()
        self._send = send
        self._registry = registry
        self._guard = guard
        self._chat = chat
        self._read = read_resource
        self._prompter = prompter
        self._open_url = open_url
        self._tool = tool
        self._on_message = on_message
        self._on_display_mode = on_display_mode
        self._on_model_context = on_model_context
        self._sample = sample
        self._host_version = host_version
        self._waiting: list[Message] = []  # host -> view, held until initialized
        self._replies: dict[int, asyncio.Future[Message]] = {}
        self._request_ids = itertools.count(1)
        self._closed = False

    # --- host -> view ---------------------------------------------------------------

    def _notify(self, method: str, params: Mapping[str, Any]) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method, "params": dict(params)}
        if self._closed:
            return
        if not self.initialized:
            self._waiting.append(message)
        else:
            self._send(message)

    def tool_input_partial(self, arguments: Mapping[str, Any]) -> None:
        self._notify("ui/notifications/tool-input-partial", {"arguments": dict(arguments)})

    def tool_input(self, arguments: Mapping[str, Any]) -> None:
        self._notify("ui/notifications/tool-input", {"arguments": dict(arguments)})

    def tool_result(self, result: ToolResult) -> None:
        self._notify("ui/notifications/tool-result", call_tool_result(result))

    def tool_cancelled(self, reason: str) -> None:
        self._notify("ui/notifications/tool-cancelled", {"reason": reason})

    def context_changed(self, **fields: Any) -> None:
        """Tell the view what changed (theme, displayMode, ...); ``fields`` are
        HostContext's own names."""
        self.host = replace(self.host, **fields)
        full = self.host.to_json()
        changed = {k: v for k, v in full.items() if k in _wire_names(fields)}
        self._notify("ui/notifications/host-context-changed", changed)

    async def teardown(self, reason: str, *, timeout: float = 1.0) -> None:  # noqa: ASYNC109
        """Ask the view to wrap up, wait up to ``timeout`` for its answer, then close."""
        if self._closed:
            return
        if self.initialized:
            ident = next(self._request_ids)
            reply = self._replies[ident] = asyncio.get_running_loop().create_future()
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "method": "ui/resource-teardown",
                    "params": {"reason": reason},
                }
            )
            try:
                await asyncio.wait_for(reply, timeout)
            except TimeoutError:
                log.info(
                    "view %s of %s did not answer its teardown", self.view.uri, self.view.server
                )
            finally:
                self._replies.pop(ident, None)
        self._closed = True
        self._waiting.clear()

    # --- view -> host ---------------------------------------------------------------

    async def handle(self, message: object) -> None:
        """One message from the view (already parsed from JSON by the face)."""
        if self._closed:
            return
        if not isinstance(message, Mapping) or message.get("jsonrpc") != "2.0":
            self._error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
            return
        ident = message.get("id")
        method = message.get("method")
        if method is None and ident is not None:  # a reply to our request
            waiting = self._replies.get(ident) if isinstance(ident, int) else None
            if waiting is not None and not waiting.done():  # a second reply is ignored
                waiting.set_result(dict(message))
            return
        if not isinstance(method, str):
            self._error(ident, INVALID_REQUEST, "the message has no method")
            return
        params = message.get("params") or {}
        if not isinstance(params, Mapping):
            self._error(ident, INVALID_PARAMS, f"{method}: params must be an object")
            return
        if ident is None:
            self._notification(method, params)
            return
        if not isinstance(ident, int | str) or isinstance(ident, bool):
            self._error(None, INVALID_REQUEST, "the request id must be a number or a string")
            return
        try:
            result = await self._request(method, params)
        except _Failure as failure:
            self.calls.refused.append(f"{method}: {failure}")
            self._error(ident, failure.code, str(failure))
            return
        self._send({"jsonrpc": "2.0", "id": ident, "result": result})

    def _error(self, ident: object, code: int, text: str) -> None:
        self._send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}})

    def _notification(self, method: str, params: Mapping[str, Any]) -> None:
        if method == "ui/notifications/initialized":
            if not self.initialized:
                self.initialized = True
                waiting, self._waiting = self._waiting, []
                for message in waiting:
                    self._send(message)
        elif method == "notifications/message":
            level = str(params.get("level", "info"))
            log.info(
                "view %s of %s [%s]: %s", self.view.uri, self.view.server, level, params.get("data")
            )
        # size-changed and anything else: the face reads sizes itself; nothing to do here

    async def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if method == "ui/initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if method == "tools/call":
            return await self._call_tool(params)
        if method == "resources/read":
            return await self._read_resource(params)
        if method == "ui/open-link":
            return await self._open_link(params)
        if method == "ui/message":
            return self._message(params)
        if method == "ui/update-model-context":
            self.model_context = {
                k: params[k] for k in ("content", "structuredContent") if k in params
            }
            if self._on_model_context is not None:
                self._on_model_context(self.model_context)
            return {}
        if method == "ui/request-display-mode":
            return self._display_mode(params)
        if method == "sampling/createMessage":
            return await self._sampling(params)
        raise _Failure(METHOD_NOT_FOUND, f"a view cannot ask for {method!r}")

    def _initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        caps = params.get("appCapabilities")
        modes = caps.get("availableDisplayModes") if isinstance(caps, Mapping) else None
        if isinstance(modes, list):
            self.app_modes = tuple(m for m in modes if m in DISPLAY_MODES)
        context = self.host.to_json()
        if self._tool is not None:
            context["toolInfo"] = {
                "tool": {
                    "name": self._tool.tool,
                    "description": self._tool.description,
                    "inputSchema": self._tool.input_schema,
                }
            }
        csp = self.view.csp
        return {
            "protocolVersion": SPEC_VERSION,
            "hostInfo": {"name": "portico", "version": self._host_version},
            "hostCapabilities": {
                "openLinks": {},
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                **({"sampling": {}} if self._sample is not None else {}),
                "sandbox": {
                    "permissions": {},  # none granted without asking the person
                    "csp": {
                        "connectDomains": list(csp.connect),
                        "resourceDomains": list(csp.resource),
                        "frameDomains": list(csp.frame),
                        "baseUriDomains": list(csp.base_uri),
                    },
                },
            },
            "hostContext": context,
        }

    def _own_tool(self, name: object) -> RegisteredTool:
        if not isinstance(name, str) or not name:
            raise _Failure(INVALID_PARAMS, "tools/call needs the tool's name")
        for tool in self._registry.server_tools(self.view.server):
            if tool.tool == name and not tool.utility:
                return tool
        raise _Failure(INVALID_PARAMS, f"server {self.view.server!r} offers no tool named {name!r}")

    async def _call_tool(self, params: Mapping[str, Any]) -> dict[str, Any]:
        tool = self._own_tool(params.get("name"))
        if not tool.for_views:
            raise _Failure(
                DENIED, f"the tool {tool.tool!r} is offered to models only, not to views"
            )
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise _Failure(INVALID_PARAMS, "tools/call arguments must be an object")
        self.calls.tools.append(tool.qualified)
        context = CallContext(caller=self.caller)
        result = await self._guard.call(self._chat, tool.qualified, arguments, context=context)
        return call_tool_result(result)

    async def _read_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise _Failure(INVALID_PARAMS, "resources/read needs a uri")
        try:
            with calling(self.caller.describe()):  # the server's Activity names the view
                raw = await self._read(uri)
        except Exception as exc:
            raise _Failure(
                DENIED, f"server {self.view.server!r} could not read {uri}: {exc}"
            ) from exc
        dump = getattr(raw, "model_dump", None)
        if dump is not None:
            dumped: dict[str, Any] = dump(mode="json", by_alias=True, exclude_none=True)
            return dumped
        return dict(raw)

    async def _open_link(self, params: Mapping[str, Any]) -> dict[str, Any]:
        url = params.get("url")
        if not isinstance(url, str) or not url:
            raise _Failure(INVALID_PARAMS, "ui/open-link needs a url")
        review = review_url(url)
        if not review.openable:
            raise _Failure(DENIED, "Invalid URL: only http and https links are opened")
        request = ElicitationRequest(
            server=self.view.server,
            message=f"The view {self.view.uri} asks to open a link in your browser.",
            mode="url",
            url=review.url,
        )
        outcome = await ask_outcome(self._prompter.elicit(request), LINK_TIMEOUT)
        if not outcome.answered or outcome.answer is None or outcome.answer.action != "accept":
            raise _Failure(DENIED, "Link opening denied by user")
        self._open_url(review.url)
        return {}

    def _message(self, params: Mapping[str, Any]) -> dict[str, Any]:
        content = params.get("content")
        if params.get("role", "user") != "user" or not isinstance(content, Mapping):
            raise _Failure(INVALID_PARAMS, "Invalid message format: a user message with content")
        text = content.get("text") if content.get("type") == "text" else None
        if not isinstance(text, str) or not text.strip():
            raise _Failure(INVALID_PARAMS, "Invalid message format: text content is required")
        if self._on_message is None:
            raise _Failure(DENIED, "Message sending denied: this view is not in a chat")
        self._on_message(text)
        return {}

    async def _sampling(self, params: Mapping[str, Any]) -> dict[str, Any]:
        if self._sample is None:
            raise _Failure(
                DENIED,
                f"sampling is not enabled for {self.view.server!r}, so its views "
                "cannot ask the model either",
            )
        try:
            return await self._sample(params)
        except SamplingRefused as refused:
            raise _Failure(refused.code, str(refused)) from refused

    async def ask_permission(self, kind: str) -> bool:
        """Ask the person whether this view may use ``kind`` (a :data:`PERMISSION_WORDS`
        key); True only when they accept. One its server did not declare is refused
        without a question (its frame was never delegated it either). The face
        remembers the answer per view."""
        words = PERMISSION_WORDS.get(kind)
        if words is None or self._closed:
            return False
        if not permission_declared(kind, self.view.permissions):
            self.calls.refused.append(f"permission {kind}: its server did not declare it")
            log.info(
                "the view %s of %s asked for %s, which it did not declare; refused",
                self.view.uri,
                self.view.server,
                kind,
            )
            return False
        request = ElicitationRequest(
            server=self.view.server,
            message=(
                f"The view {self.view.uri} of {self.view.server} asks to use {words}. "
                "Allow it for this view until Portico quits?"
            ),
        )
        outcome = await ask_outcome(self._prompter.elicit(request), PERMISSION_TIMEOUT)
        granted = (
            outcome.answered and outcome.answer is not None and outcome.answer.action == "accept"
        )
        if not granted:
            self.calls.refused.append(f"permission {kind}: the person did not allow it")
        return granted

    def _display_mode(self, params: Mapping[str, Any]) -> dict[str, Any]:
        mode = params.get("mode")
        allowed = mode in self.host.available_modes and (
            not self.app_modes or mode in self.app_modes
        )
        if allowed and isinstance(mode, str) and mode != self.host.display_mode:
            self.host = replace(self.host, display_mode=mode)
            if self._on_display_mode is not None:
                self._on_display_mode(mode)
        return {"mode": self.host.display_mode}


_WIRE = {
    "theme": "theme",
    "display_mode": "displayMode",
    "available_modes": "availableDisplayModes",
    "locale": "locale",
    "time_zone": "timeZone",
    "max_height": "containerDimensions",
    "width": "containerDimensions",
    "variables": "styles",
}


def _wire_names(fields: Mapping[str, Any]) -> set[str]:
    return {_WIRE[name] for name in fields if name in _WIRE}
