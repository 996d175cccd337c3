"""A tool call's context is explicit: each approval question names the call that asks
and its caller, so two parallel calls with the same arguments get their own answers."""

from __future__ import annotations

import pytest

from portico.chat.events import ApprovalAnswered, ApprovalAsked, Event
from portico.chat.tools import PlannedCall, run_calls
from portico.prompts import ApprovalAnswer, ApprovalChoice, Caller, ToolApprovalRequest
from tests.chat.conftest import chat_setup
from tests.helpers.specs import toolbox_spec

pytestmark = pytest.mark.slow  # a real server


async def test_each_question_names_its_call_and_gets_that_calls_answer() -> None:
    def by_call(request: ToolApprovalRequest) -> ApprovalAnswer:
        choice = ApprovalChoice.DENY if request.call_id == "first" else ApprovalChoice.ONCE
        return ApprovalAnswer(choice)

    async with chat_setup(toolbox_spec("tb")) as s:
        s.person.add("approve_tool", by_call, by_call)
        chat = await s.host.new()
        events: list[Event] = []
        same = {"text": "the same words"}
        calls = [PlannedCall("first", "tb__echo", same), PlannedCall("second", "tb__echo", same)]
        reports = await run_calls(
            s.host.guard, chat.context, chat.active_tools, calls, events.append
        )
        outcomes = {r.id: r.outcome for r in reports}
        assert outcomes == {"first": "denied", "second": "ok"}
        asked = s.person.requests("approve_tool")
        assert sorted(r.call_id for r in asked) == ["first", "second"]
        assert {r.caller for r in asked} == {Caller("chat", chat.id)}
        for event in events:
            if isinstance(event, ApprovalAsked):
                assert event.request.call_id == event.call_id
        answered = {e.call_id: e.choice for e in events if isinstance(e, ApprovalAnswered)}
        assert answered == {"first": "deny", "second": "once"}
