"""Elicitation end to end: the asker server and server-everything ask the person."""

from __future__ import annotations

import json

import pytest

from portico.config.model import ElicitationSpec, Protocol, TrustLevel
from portico.policy.guard import ChatContext
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.prompts import ElicitationAnswer
from portico.runtime.errors import RuntimeFailure
from portico.runtime.events import Status
from portico.runtime.hub import Hub

from .conftest import EVERYTHING, HANG, NODE, ScriptedPerson, asker_spec, config_of, spec_for

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def form(hub: Hub, server: str = "a") -> dict[str, object]:
    result = await hub.registry.call(f"{server}__form", {})
    return json.loads(result.text())


async def test_defaults_prefilled_and_answer_returned(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("a")))
        person.add(
            "elicit",
            lambda r: ElicitationAnswer("accept", {**r.defaults, "age": 36}),
        )
        answer = await form(hub)
        assert answer == {
            "action": "accept",
            "content": {"name": "Ada", "age": 36, "color": "blue", "subscribe": False},
        }
        [request] = person.requests("elicit")
        assert request.server == "a" and request.mode == "form"
        assert request.message == "Tell me about you"
        assert request.defaults == {"name": "Ada", "color": "blue", "subscribe": False}
        assert request.schema["required"] == ["name", "age"]
        assert request.error is None
        metrics = policy.elicitation.metrics_for("a")
        assert (metrics.requests, metrics.accepted) == (1, 1)


async def test_invalid_answer_is_asked_again_with_the_error(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("a")))
        person.add(
            "elicit",
            ElicitationAnswer("accept", {"name": "Bo", "age": -5}),
            ElicitationAnswer("accept", {"name": "Bo", "age": 5, "color": "red"}),
        )
        answer = await form(hub)
        assert answer["content"] == {"name": "Bo", "age": 5, "color": "red"}
        first, second = person.requests("elicit")
        assert first.error is None
        assert second.error == "age: -5 is less than the minimum of 0"
        assert second.defaults["age"] == -5  # what the person typed stays in the form
        assert policy.elicitation.metrics_for("a").errors == 1


async def test_decline_cancel_timeout_and_nobody_to_ask(person: ScriptedPerson) -> None:
    policy = Policy(person)
    quick = asker_spec("q", elicitation=ElicitationSpec(timeout=0.5))
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("a"), quick))
        person.add("elicit", ElicitationAnswer("decline"), ElicitationAnswer("cancel"))
        assert (await form(hub))["action"] == "decline"
        assert (await form(hub))["action"] == "cancel"
        person.add("elicit", HANG)
        assert (await form(hub, "q"))["action"] == "cancel"  # timed out
        quiet = Policy(NonInteractivePrompter())
        async with Hub(hooks=quiet.hooks()) as other:
            await other.apply(config_of(asker_spec("n")))
            assert (await form(other, "n"))["action"] == "decline"
        metrics = policy.elicitation.metrics_for("a")
        assert (metrics.declined, metrics.cancelled) == (1, 1)


async def test_yolo_never_answers_for_the_person(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("a", trust=TrustLevel.FULL)))
        guard = policy.guard(hub.registry, yolo=True, approvals_off=True)
        person.add("elicit", ElicitationAnswer("decline"))
        result = await guard.call(ChatContext(yolo=True), "a__form", {})
        assert json.loads(result.text())["action"] == "decline"
        assert len(person.requests("elicit")) == 1


async def test_url_mode_declined_unless_allowed_and_opened_only_on_consent(
    person: ScriptedPerson,
) -> None:
    policy = Policy(person)
    opened: list[str] = []

    async def opener(url: str) -> None:
        opened.append(url)

    policy.elicitation.opener = opener
    allowed = asker_spec("u", elicitation=ElicitationSpec(allow_url=True))
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("a"), allowed))
        declined = await hub.registry.call("a__link", {})
        assert declined.text() == "decline"
        assert person.requests("elicit") == []
        assert any("https://example.com/connect" in n.text for n in person.notices)
        person.add("elicit", ElicitationAnswer("accept"))
        accepted = await hub.registry.call("u__link", {})
        assert accepted.text() == "accept"
        [request] = person.requests("elicit")
        assert request.mode == "url" and request.url == "https://example.com/connect"
        assert opened == ["https://example.com/connect"]  # in the browser, after consent
        person.add("elicit", ElicitationAnswer("decline"))
        assert (await hub.registry.call("u__link", {})).text() == "decline"
        assert opened == ["https://example.com/connect"]  # a "no" opens nothing


@pytest.mark.npm
async def test_server_everything_trigger_elicitation_request(person: ScriptedPerson) -> None:
    spec = spec_for(
        "everything",
        command=str(NODE),
        args=(str(EVERYTHING), "stdio"),
        protocol=Protocol.LEGACY,
        connect_timeout=30.0,
    )
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        assert hub.connection("everything").state.status is Status.RUNNING
        person.add(
            "elicit",
            # first a wrong email (re-asked), then a valid answer
            lambda r: ElicitationAnswer("accept", {**r.defaults, "name": "Ada", "email": "nope"}),
            lambda r: ElicitationAnswer(
                "accept", {**r.defaults, "name": "Ada Lovelace", "email": "ada@example.com"}
            ),
        )
        result = await hub.registry.call("everything__trigger-elicitation-request", {})
        text = result.text()
        assert "Name: Ada Lovelace" in text and "Favorite Integer: 42" in text
        first, second = person.requests("elicit")
        assert first.defaults["firstLine"] == "It was a dark and stormy night."
        assert first.defaults["untitledMultipleSelectEnum"] == ["Guitar"]
        assert second.error is not None and "email" in second.error


async def test_a_call_that_needs_a_page_first_asks_then_goes_on_when_the_server_says_done(
    person: ScriptedPerson,
) -> None:
    """Issue 26, item 3: error -32042 came back raw and elicitation/complete went unheard.
    The person is asked to open the page (the URL-mode question); the browser's visit
    makes the server send notifications/elicitation/complete, and the call goes on."""
    import httpx2

    policy = Policy(person)
    visited: list[str] = []

    async def browser(url: str) -> None:  # what the person's browser does: visit the page
        visited.append(url)
        async with httpx2.AsyncClient() as http:
            (await http.get(url)).raise_for_status()

    policy.elicitation.opener = browser
    allowed = asker_spec("u", elicitation=ElicitationSpec(allow_url=True))
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("off"), allowed))
        person.add("elicit", ElicitationAnswer("accept"))
        result = await hub.registry.call("u__gated", {})
        assert result.text() == "gate opened"
        [request] = person.requests("elicit")
        assert request.mode == "url" and request.message == "Connect your account to open the gate"
        assert request.url is not None and request.url.endswith("/connect?id=gate-1")
        assert visited == [request.url]
        log = hub.connection("u").log.lines
        assert any("URL elicitation gate-1 completed" in line for line in log)

        # Without allow_url the question is not asked; the call says what it needed.
        with pytest.raises(RuntimeFailure) as refused:
            await hub.registry.call("off__gated", {})
        text = str(refused.value)
        assert text.startswith("off: tool 'gated' needs you to open http://127.0.0.1:")
        assert text.endswith(
            "(Connect your account to open the gate); declined, so the call was not made"
        )
        assert len(person.requests("elicit")) == 1
        assert any("elicitation.allow_url" in n.text for n in person.notices)
