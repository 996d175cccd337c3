"""Tool approvals end to end: Hub + registry + ToolGuard against the asker server (stdio)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.config.model import TrustLevel
from portico.policy.approval_store import ApprovalStore
from portico.policy.guard import ChatContext
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.prompts import ApprovalAnswer, ApprovalChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub

from .conftest import ScriptedPerson, asker_spec, config_of

pytestmark = pytest.mark.slow  # talks to real servers or processes

ONCE = ApprovalAnswer(ApprovalChoice.ONCE)
SESSION = ApprovalAnswer(ApprovalChoice.SESSION)
ALWAYS = ApprovalAnswer(ApprovalChoice.ALWAYS)
DENY = ApprovalAnswer(ApprovalChoice.DENY)


async def runs(guard, chat) -> int:  # type: ignore[no-untyped-def]
    result = await guard.call(chat, "asker__count", {})
    return int(result.text())


async def test_default_trust_asks_for_tools_without_read_only_hint(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        assert hub.connection("asker").state.status is Status.RUNNING
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        # read-only: runs without a question
        status = await guard.call(chat, "asker__status", {})
        assert status.text() == "all good" and person.asked == []
        # not read-only: asks, with the complete validated arguments
        person.add("approve_tool", ONCE, ONCE)
        first = await guard.call(chat, "asker__write_note", {"text": "hi", "priority": 2})
        assert first.text() == "noted hi 2"
        [request] = person.requests("approve_tool")
        assert request.tool == "write_note" and request.server == "asker"
        assert request.qualified_name == "asker__write_note"
        assert (
            '"priority": 2' in request.arguments_json and '"text": "hi"' in request.arguments_json
        )
        assert request.reason == "this tool is not marked read-only"
        assert set(request.choices) == set(ApprovalChoice)
        # Allow Once covers one call only
        await guard.call(chat, "asker__write_note", {"text": "hi", "priority": 2})
        assert len(person.requests("approve_tool")) == 2


async def test_session_approval_is_exact_input_unless_any_arguments(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", SESSION)
        await guard.call(chat, "asker__write_note", {"text": "a", "priority": 1})
        # same arguments (other key order): no question
        again = await guard.call(chat, "asker__write_note", {"priority": 1, "text": "a"})
        assert again.text() == "noted a 1"
        assert len(person.requests("approve_tool")) == 1
        # other arguments: asks again; now widen to any arguments
        person.add("approve_tool", ApprovalAnswer(ApprovalChoice.SESSION, any_arguments=True))
        await guard.call(chat, "asker__write_note", {"text": "b", "priority": 1})
        assert len(person.requests("approve_tool")) == 2
        third = await guard.call(chat, "asker__write_note", {"text": "c", "priority": 9})
        assert third.text() == "noted c 9"
        assert len(person.requests("approve_tool")) == 2


async def test_deny_and_refusal_do_not_run_the_tool(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        before = await runs(guard, chat)
        person.add("approve_tool", DENY)
        denied = await guard.call(chat, "asker__write_note", {"text": "x", "priority": 1})
        assert denied.is_error and "denied" in denied.text()
        # nobody can answer: refused with the actionable message, not run
        quiet = Policy(NonInteractivePrompter())
        quiet_guard = quiet.guard(hub.registry)
        refused = await quiet_guard.call(chat, "asker__write_note", {"text": "x", "priority": 1})
        assert refused.is_error
        assert "Do not retry" in refused.text() and 'trust = "full"' in refused.text()
        assert await runs(guard, chat) == before


async def test_invalid_arguments_go_back_to_the_model_without_asking(
    person: ScriptedPerson,
) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec()))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        before = await runs(guard, chat)
        bad = await guard.call(chat, "asker__write_note", {"text": "x", "priority": "high"})
        assert bad.is_error
        assert "Invalid arguments for 'asker__write_note'" in bad.text()
        assert "priority" in bad.text() and "'high' is not of type 'integer'" in bad.text()
        missing = await guard.call(chat, "asker__write_note", {"text": "x"})
        assert missing.is_error and "'priority' is a required property" in missing.text()
        assert person.asked == []
        assert await runs(guard, chat) == before


async def test_trust_levels_yolo_and_approvals_off(person: ScriptedPerson) -> None:
    policy = Policy(person)
    full = asker_spec("full", trust=TrustLevel.FULL)
    untrusted = asker_spec("wary", trust=TrustLevel.UNTRUSTED)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(full, untrusted))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        ok = await guard.call(chat, "full__write_note", {"text": "f", "priority": 1})
        assert ok.text() == "noted f 1" and person.asked == []
        # untrusted: read-only still free, anything else asks
        assert (await guard.call(chat, "wary__status", {})).text() == "all good"
        person.add("approve_tool", ONCE)
        await guard.call(chat, "wary__write_note", {"text": "w", "priority": 1})
        [request] = person.requests("approve_tool")
        assert "untrusted" in request.reason
        # YOLO for this chat skips the trust prompt; another chat still asks
        yolo_chat = ChatContext(yolo=True)
        assert not (
            await guard.call(yolo_chat, "wary__write_note", {"text": "y", "priority": 1})
        ).is_error
        assert len(person.requests("approve_tool")) == 1
        # approvals.mode: off and --yolo (process) skip it too
        for quiet in (
            policy.guard(hub.registry, approvals_off=True),
            policy.guard(hub.registry, yolo=True),
        ):
            result = await quiet.call(chat, "wary__write_note", {"text": "z", "priority": 1})
            assert result.text() == "noted z 1"
        assert len(person.requests("approve_tool")) == 1


async def test_always_approval_persists_and_binds_to_the_tool_contract(
    person: ScriptedPerson, tmp_path: Path
) -> None:
    desc = tmp_path / "desc.txt"
    desc.write_text("Version one of the tool.")
    spec = asker_spec("asker", "--desc-file", str(desc))
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", ALWAYS)
        assert (await guard.call(chat, "asker__mutable", {})).text() == "mutable ran"
        # a new process (fresh store read from disk) remembers it
        fresh = Policy(ScriptedPerson())
        fresh_guard = fresh.guard(hub.registry)
        assert (await fresh_guard.call(chat, "asker__mutable", {})).text() == "mutable ran"
        assert len(ApprovalStore().always_keys()) == 1
        # reconnect with a changed contract (rug pull): asks again
        desc.write_text("Version two: now it also deletes your files.")
        await hub.restart("asker")
        assert hub.connection("asker").state.status is Status.RUNNING
        assert "Version two" in hub.registry.resolve("asker__mutable").description
        person.add("approve_tool", ONCE)
        assert (await guard.call(chat, "asker__mutable", {})).text() == "mutable ran"
        assert len(person.requests("approve_tool")) == 2
        assert "Version two" in person.requests("approve_tool")[-1].description
        # a reconnect with the SAME contract keeps the approval
        desc.write_text("Version one of the tool.")
        await hub.restart("asker")
        assert (await guard.call(chat, "asker__mutable", {})).text() == "mutable ran"
        assert len(person.requests("approve_tool")) == 2


async def test_a_different_server_under_the_same_name_is_asked_again(
    person: ScriptedPerson,
) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("asker")))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", ApprovalAnswer(ApprovalChoice.SESSION, any_arguments=True))
        await guard.call(chat, "asker__write_note", {"text": "a", "priority": 1})
        # the same name now runs another command line (same tools): a new authority
        other = asker_spec("asker", "--desc-file", "/dev/null")
        await hub.apply(config_of(other))
        person.add("approve_tool", DENY)
        result = await guard.call(chat, "asker__write_note", {"text": "a", "priority": 1})
        assert result.is_error and len(person.requests("approve_tool")) == 2
