"""What an approval is bound to: Allow-for-this-Session ends with the connection it was
given on; Always Allow binds to the authority + tool contract and survives restarts; an
HTTP server's authority is its URL origin."""

from __future__ import annotations

import pytest

from portico.config.model import Transport
from portico.policy.approval_store import ApprovalStore
from portico.policy.approvals import ApprovalKey
from portico.policy.guard import ChatContext
from portico.policy.setup import Policy
from portico.prompts import ApprovalAnswer, ApprovalChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub

from .conftest import ScriptedPerson, asker_spec, config_of, spec_for
from .test_trust_http import asker_http  # noqa: F401 (the module-scoped HTTP asker fixture)

pytestmark = pytest.mark.slow  # talks to real servers or processes

SESSION = ApprovalAnswer(ApprovalChoice.SESSION)
ALWAYS = ApprovalAnswer(ApprovalChoice.ALWAYS)
ONCE = ApprovalAnswer(ApprovalChoice.ONCE)
NOTE = {"text": "a", "priority": 1}


async def test_session_approval_ends_when_the_server_reconnects(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        conn = hub.connection("asker")
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", SESSION)
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 1
        first_generation = conn.generation
        # same tool, same contract, same command: only the connection is new
        await hub.restart("asker")
        assert conn.state.status is Status.RUNNING
        assert conn.generation != first_generation
        person.add("approve_tool", SESSION)
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 2
        # the new Session approval holds on the new connection
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 2
        # a config change that keeps the authority (same command) still reconnects
        await hub.apply(config_of(asker_spec(env={"NOTE_MOOD": "calm"})))
        assert hub.connection("asker").state.status is Status.RUNNING
        person.add("approve_tool", SESSION)
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 3


async def test_always_approval_survives_reconnects_and_a_new_process(
    person: ScriptedPerson,
) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", ALWAYS)
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        await hub.restart("asker")
        await hub.restart("asker")
        assert (await guard.call(chat, "asker__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 1
    # a new process: new hub, new connection (a new generation), store read from disk
    quiet = ScriptedPerson()
    fresh = Policy(quiet)
    async with Hub(hooks=fresh.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        guard = fresh.guard(hub.registry)
        result = await guard.call(ChatContext(), "asker__write_note", NOTE)
        assert result.text() == "noted a 1" and quiet.asked == []


def test_session_keys_bind_to_the_generation_always_keys_do_not() -> None:
    store = ApprovalStore()
    key = ApprovalKey("s", "t", "stdio:abc", "contract", "args")
    store.allow_session(key, 3)
    assert store.allows(key, 3)
    assert not store.allows(key, 4)
    store.allow_always(key)
    assert store.allows(key, 4) and store.allows(key, None)
    assert ApprovalStore().allows(key, 99)  # read back from disk: no generation in it


async def test_always_approval_for_a_url_server_ends_when_the_origin_changes(
    asker_http: int,  # noqa: F811
    person: ScriptedPerson,
) -> None:
    def http(url: str):  # type: ignore[no-untyped-def]
        return spec_for("web", transport=Transport.HTTP, url=url, connect_timeout=30.0)

    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(http(f"http://127.0.0.1:{asker_http}/mcp")))
        assert hub.connection("web").state.status is Status.RUNNING
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", ALWAYS)
        assert (await guard.call(chat, "web__write_note", NOTE)).text() == "noted a 1"
        [key] = ApprovalStore().always_keys()
        assert key.authority == f"http://127.0.0.1:{asker_http}"
        # another path on the same origin: still the same authority, no question
        await hub.apply(config_of(http(f"http://127.0.0.1:{asker_http}/mcp/")))
        assert (await guard.call(chat, "web__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 1
        # same server, same tools, but another origin (host name): asked again
        await hub.apply(config_of(http(f"http://localhost:{asker_http}/mcp")))
        assert hub.connection("web").state.status is Status.RUNNING
        person.add("approve_tool", ONCE)
        assert (await guard.call(chat, "web__write_note", NOTE)).text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 2
