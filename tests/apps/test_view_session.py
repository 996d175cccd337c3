"""MCP Apps end to end against the SDK's own Apps server (tests/servers/viewer.py):
visibility in the model's tool list and the guard, the view read once and its policy,
and a view's JSON-RPC session whose tool calls reach the server only through the guard."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from portico.apps.resource import ViewCache
from portico.apps.session import ViewSession, sampler
from portico.policy.guard import ChatContext, ToolGuard
from portico.policy.sampling import SamplingPolicy
from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    ElicitationAnswer,
    SamplingAnswer,
    SamplingMessage,
)
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from portico.services import build_services
from tests.helpers.models import ScriptedModel
from tests.helpers.person import ScriptedPerson
from tests.helpers.specs import make_spec
from tests.runtime.test_hub_toolbox import config

pytestmark = pytest.mark.slow  # a real server process

VIEWER = Path(__file__).parents[1] / "servers" / "viewer.py"
ONCE = ApprovalAnswer(ApprovalChoice.ONCE)
DENY = ApprovalAnswer(ApprovalChoice.DENY)


def arrived(calls: Path) -> list[dict[str, Any]]:
    """The tool calls the server ran, as it wrote them down."""
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


class ViewPage:
    """Stands in for the web page: what Portico sent to the view, in order."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        json.dumps(message)  # everything sent must be plain JSON
        self.got.append(message)

    def methods(self) -> list[str]:
        return [m.get("method", "") for m in self.got if "method" in m]

    def reply(self, ident: int) -> dict[str, Any]:
        [found] = [m for m in self.got if m.get("id") == ident and "method" not in m]
        return found


async def request(session: ViewSession, page: ViewPage, ident: int, method: str, **params: Any):  # type: ignore[no-untyped-def]
    await session.handle({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
    return page.reply(ident)


async def call(session: ViewSession, page: ViewPage, ident: int, name: str, **arguments: Any):  # type: ignore[no-untyped-def]
    return await request(session, page, ident, "tools/call", name=name, arguments=arguments)


async def test_a_view_calls_its_own_tools_through_the_guard(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    spec = make_spec(
        "viewer", "stdio", command=sys.executable, args=(str(VIEWER), "--calls", str(calls))
    )
    person = ScriptedPerson()
    services = build_services(person)
    opened: list[str] = []
    async with Hub(hooks=services.hooks) as hub:
        await hub.apply(config(spec))
        assert (await hub.connection("viewer").wait_settled(30)).status is Status.RUNNING
        registry = hub.registry
        guard: ToolGuard = services.policy.guard(registry)
        chat = ChatContext()

        # Portico advertised MCP Apps, so the server bound its views
        negotiated = await guard.call(chat, "viewer__apps_negotiated", {})
        assert negotiated.text() == "yes"

        # the model is offered everything but the view-only tool
        offered = {t.name for t in registry.model_tools()}
        assert "viewer__refresh" not in offered
        assert {"viewer__show_weather", "viewer__forecast", "viewer__plain"} <= offered
        # ... and a chat that names it anyway is refused before anything reaches the server
        refused = await guard.call(chat, "viewer__refresh", {"city": "Oslo"})
        assert refused.is_error and "views only" in refused.text()
        assert arrived(calls) == []

        # the view is read once per session; its policy keeps only plain declared origins
        tool = registry.resolve("viewer__show_weather")
        assert tool.view is not None and tool.view.resource_uri == "ui://viewer/weather"
        connection = hub.connection("viewer")
        cache = ViewCache("viewer")
        view = await cache.get(
            tool.view.resource_uri, connection.read_resource, generation=connection.generation
        )
        again = await cache.get(
            tool.view.resource_uri, connection.read_resource, generation=connection.generation
        )
        assert again is view and cache.reads == 1
        assert '<h1 id="city">' in view.html and view.permissions == ("camera",)
        assert view.csp.connect == ("https://api.weather.example",)
        assert [d for d in view.csp.dropped if "script-src *" in d]
        header = view.csp.header()
        assert "connect-src https://api.weather.example;" in header
        assert "script-src *" not in header and "x.example" not in header

        # the model's call of the tool with the view (approved once)
        person.add("approve_tool", ONCE)
        result = await guard.call(chat, "viewer__show_weather", {"city": "Oslo"})
        assert not result.is_error

        page = ViewPage()
        session = ViewSession(
            view,
            send=page.send,
            registry=registry,
            guard=guard,
            chat=chat,
            read_resource=connection.read_resource,
            prompter=person,
            open_url=opened.append,
            tool=tool,
        )
        session.tool_input({"city": "Oslo"})
        session.tool_result(result)
        assert page.got == []  # nothing reaches a view before it says it is initialized
        init = await request(session, page, 1, "ui/initialize", appCapabilities={})
        context = init["result"]["hostContext"]
        assert context["toolInfo"]["tool"]["name"] == "show_weather"
        assert context["displayMode"] == "inline" and context["platform"] == "desktop"
        sandbox = init["result"]["hostCapabilities"]["sandbox"]
        assert sandbox["permissions"] == {}  # asked for, never granted unasked
        assert sandbox["csp"]["connectDomains"] == ["https://api.weather.example"]
        await session.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        assert page.methods()[-2:] == [
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
        ]
        assert page.got[-1]["params"]["structuredContent"]["city"] == "Oslo"

        # the view calls its view-only tool: asked with the exact arguments, naming the view
        person.add("approve_tool", ONCE)
        reply = await request(
            session, page, 2, "tools/call", name="refresh", arguments={"city": "Oslo"}
        )
        assert reply["result"]["content"][0]["text"] == "refreshed Oslo"
        question = person.requests("approve_tool")[-1]
        assert question.caller.kind == "view" and question.caller.server == "viewer"
        assert "ui://viewer/weather" in question.caller.describe()
        assert '"Oslo"' in question.arguments_json
        assert arrived(calls)[-1] == {"tool": "refresh", "arguments": {"city": "Oslo"}}
        # ... and the server's Activity names who asked for each call: the view, the chat
        asked = {
            (e.message or {}).get("params", {}).get("name"): e.caller
            for e in connection.activity.snapshot()
            if e.method == "tools/call"
        }
        assert asked["refresh"] == "the view ui://viewer/weather of viewer"
        assert asked["show_weather"].startswith("chat ")

        # denied: an error result for the view, and nothing reaches the server
        person.add("approve_tool", DENY)
        reply = await request(
            session, page, 3, "tools/call", name="refresh", arguments={"city": "Rome"}
        )
        assert reply["result"]["isError"] is True
        assert all(c["arguments"].get("city") != "Rome" for c in arrived(calls))

        # a tool for models only, another server's tool and a utility tool are out of reach
        reply = await request(
            session, page, 4, "tools/call", name="forecast", arguments={"city": "x"}
        )
        assert reply["error"]["code"] == -32000 and "models only" in reply["error"]["message"]
        reply = await call(session, page, 5, "read_resource")
        assert reply["error"]["code"] == -32602
        assert [c["tool"] for c in arrived(calls)].count("forecast") == 0

        # reading its own server's resources works through the same connection
        reply = await request(session, page, 6, "resources/read", uri="ui://viewer/weather")
        assert reply["result"]["contents"][0]["mimeType"] == "text/html;profile=mcp-app"
        last_read = [e for e in connection.activity.snapshot() if e.method == "resources/read"][-1]
        assert last_read.caller == "the view ui://viewer/weather of viewer"
        listed = [e.caller for e in connection.activity.snapshot() if e.method == "tools/list"]
        assert listed and set(listed) == {""}  # Portico's own requests name nobody

        # a link opens only after the person says yes
        person.add("elicit", ElicitationAnswer("decline"), ElicitationAnswer("accept"))
        reply = await request(session, page, 7, "ui/open-link", url="https://example.com/a")
        assert reply["error"]["message"] == "Link opening denied by user" and opened == []
        reply = await request(session, page, 8, "ui/open-link", url="https://example.com/a")
        assert reply["result"] == {} and opened == ["https://example.com/a"]
        asked = person.requests("elicit")[-1]
        assert asked.mode == "url" and asked.url == "https://example.com/a"
        reply = await request(session, page, 9, "ui/open-link", url="file:///etc/passwd")
        assert "error" in reply and len(person.requests("elicit")) == 2  # never even asked

        # not in a chat: a message is refused; the model context is kept for the chat
        reply = await request(
            session, page, 10, "ui/message", role="user", content={"type": "text", "text": "hi"}
        )
        assert reply["error"]["code"] == -32000
        reply = await request(
            session, page, 11, "ui/update-model-context", structuredContent={"city": "Oslo"}
        )
        assert reply["result"] == {} and session.model_context == {
            "structuredContent": {"city": "Oslo"}
        }
        assert session.calls.tools == ["viewer__refresh", "viewer__refresh"]


async def test_a_views_permissions_and_sampling_are_asked_of_the_person(tmp_path: Path) -> None:
    """Camera: a question naming the server and the view (declined is False); the
    clipboard, which the view did not declare: refused without a question;
    sampling/createMessage: the server's sampling review, the model answering only after
    an approval."""
    spec = make_spec("viewer", "stdio", command=sys.executable, args=(str(VIEWER),))
    person = ScriptedPerson()
    services = build_services(person)
    async with Hub(hooks=services.hooks) as hub:
        await hub.apply(config(spec))
        connection = hub.connection("viewer")
        assert (await connection.wait_settled(30)).status is Status.RUNNING
        registry = hub.registry
        guard: ToolGuard = services.policy.guard(registry)
        view = await ViewCache("viewer").get(
            "ui://viewer/weather", connection.read_resource, generation=connection.generation
        )
        model = ScriptedModel()
        page = ViewPage()
        session = ViewSession(
            view,
            send=page.send,
            registry=registry,
            guard=guard,
            chat=ChatContext(),
            read_resource=connection.read_resource,
            prompter=person,
            open_url=lambda _url: None,
            sample=sampler(SamplingPolicy(person, model), connection.spec),
        )
        init = await request(session, page, 1, "ui/initialize", appCapabilities={})
        assert "sampling" in init["result"]["hostCapabilities"]

        person.add("elicit", ElicitationAnswer("decline"), ElicitationAnswer("accept"))
        assert await session.ask_permission("camera") is False  # declared, declined
        assert await session.ask_permission("camera") is True  # the session asks each time
        (camera, _again) = person.requests("elicit")
        assert "viewer" in camera.message and "ui://viewer/weather" in camera.message
        assert "your camera" in camera.message
        # undeclared (the viewer declares only the camera): refused, never asked
        assert await session.ask_permission("clipboard") is False
        assert await session.ask_permission("camera and microphone") is False
        assert await session.ask_permission("notifications") is False
        assert len(person.requests("elicit")) == 2
        assert session.calls.refused == [
            "permission camera: the person did not allow it",
            "permission clipboard: its server did not declare it",
            "permission camera and microphone: its server did not declare it",
        ]

        ask = {
            "messages": [{"role": "user", "content": {"type": "text", "text": "rain?"}}],
            "maxTokens": 40,
        }
        person.add("review_sampling", SamplingAnswer("deny"), SamplingAnswer("approve"))
        reply = await request(session, page, 2, "sampling/createMessage", **ask)
        assert reply["error"]["code"] == -1 and "declined" in reply["error"]["message"]
        assert model.calls == []
        reply = await request(session, page, 3, "sampling/createMessage", **ask)
        assert reply["result"]["content"] == {"type": "text", "text": "answer to rain?"}
        [review, _] = person.requests("review_sampling")
        assert review.server == "viewer" and review.messages == (SamplingMessage("user", "rain?"),)
        reply = await request(session, page, 4, "sampling/createMessage", maxTokens="x")
        assert reply["error"]["code"] == -32602 and len(model.calls) == 1


async def test_the_tool_call_lifecycle_reaches_the_view_in_order_and_teardown_ends_it(
    tmp_path: Path,
) -> None:
    """tool-input-partial, tool-input, tool-result and tool-cancelled wait until the view
    is initialized and then arrive in order; resource-teardown names the reason, waits for
    the view's answer (at most its timeout), and after it nothing reaches the view and
    nothing the view asks reaches the server."""
    calls = tmp_path / "calls.jsonl"
    spec = make_spec(
        "viewer", "stdio", command=sys.executable, args=(str(VIEWER), "--calls", str(calls))
    )
    person = ScriptedPerson()
    services = build_services(person)
    async with Hub(hooks=services.hooks) as hub:
        await hub.apply(config(spec))
        connection = hub.connection("viewer")
        assert (await connection.wait_settled(30)).status is Status.RUNNING
        registry = hub.registry
        view = await ViewCache("viewer").get(
            "ui://viewer/weather", connection.read_resource, generation=connection.generation
        )

        def session_on(page: ViewPage) -> ViewSession:
            return ViewSession(
                view,
                send=page.send,
                registry=registry,
                guard=services.policy.guard(registry),
                chat=ChatContext(),
                read_resource=connection.read_resource,
                prompter=person,
                open_url=lambda _url: None,
                tool=registry.resolve("viewer__show_weather"),
            )

        page = ViewPage()
        session = session_on(page)
        session.tool_input_partial({"city": "Os"})
        session.tool_input({"city": "Oslo"})
        person.add("approve_tool", ONCE)
        result = await services.policy.guard(registry).call(
            ChatContext(), "viewer__show_weather", {"city": "Oslo"}
        )
        session.tool_result(result)
        session.tool_cancelled("the person stopped the turn")
        assert page.got == []
        await request(session, page, 1, "ui/initialize", appCapabilities={})
        await session.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        assert page.methods() == [
            "ui/notifications/tool-input-partial",
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
            "ui/notifications/tool-cancelled",
        ]
        told = [m["params"] for m in page.got if "method" in m]
        assert told[0] == {"arguments": {"city": "Os"}}
        assert told[1] == {"arguments": {"city": "Oslo"}}
        assert told[3] == {"reason": "the person stopped the turn"}

        # teardown: asked with the reason, over as soon as the view answers
        ending = asyncio.ensure_future(session.teardown("the chat was closed", timeout=30))
        asked = await _next_request(page, "ui/resource-teardown")
        assert asked["params"] == {"reason": "the chat was closed"}
        await session.handle({"jsonrpc": "2.0", "id": asked["id"], "result": {}})
        await asyncio.wait_for(ending, 5)  # not the 30 s timeout
        sent = len(page.got)
        session.tool_result(result)
        await session.handle(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "refresh", "arguments": {"city": "After"}},
            }
        )
        assert len(page.got) == sent  # nothing more reaches it, not even an error
        assert all(c["arguments"].get("city") != "After" for c in arrived(calls))

        # a view that never answers its teardown is closed after the timeout
        silent = ViewPage()
        other = session_on(silent)
        await request(other, silent, 1, "ui/initialize", appCapabilities={})
        await other.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        await asyncio.wait_for(other.teardown("gone", timeout=0.2), 5)
        assert silent.methods()[-1] == "ui/resource-teardown"
        other.tool_input({"city": "x"})
        assert silent.methods()[-1] == "ui/resource-teardown"


async def _next_request(page: ViewPage, method: str) -> dict[str, Any]:
    """The request ``method`` the session sent the page, once it has."""
    for _ in range(500):
        found = [m for m in page.got if m.get("method") == method and "id" in m]
        if found:
            return found[-1]
        await asyncio.sleep(0)
    raise AssertionError(f"{method} was never sent")
