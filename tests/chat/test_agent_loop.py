"""The agent loop end to end: the scripted model (real SDKs over sockets) calls
server-everything's tools through the guard, a scripted person answers approvals."""

from __future__ import annotations

import json

from portico.chat.events import (
    ApprovalAnswered,
    ApprovalAsked,
    SpendChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
)
from portico.config.model import ToolCost
from portico.prompts import ApprovalAnswer, ApprovalChoice
from tests.chat.conftest import (
    chat_setup,
    collect,
    everything_spec,
    needs_npm,
    provider,
)
from tests.servers.model_server import text, tool_call

pytestmark = needs_npm


async def test_get_sum_with_approval_then_the_answer_streams(models) -> None:
    models.script(
        tool_call("everything__get-sum", {"a": 2, "b": 40}),
        text("The sum is 42."),
    )
    # get-sum is read-only, so the approval here is the spend limit's: it costs 5 credits
    # and the chat may spend 3 on this server
    costed = everything_spec(tool_costs=(("get-sum", ToolCost(5, 5)),), spend_limit=3.0)
    async with chat_setup(costed, providers=(provider(models),)) as s:
        s.person.add("approve_spend", ApprovalChoice.ONCE)
        chat = await s.host.new()
        assert chat.model == "scripted/gpt-test"
        run = await collect(chat.send("What is 2 + 40?"))
    [started] = run.of(ToolCallStarted)
    assert (started.server, started.tool) == ("everything", "get-sum")
    assert started.arguments == {"a": 2, "b": 40}
    [asked] = run.of(ApprovalAsked)
    assert asked.call_id == started.id and asked.request.tool == "get-sum"
    assert "past the limit" in asked.request.limit_line
    [answered] = run.of(ApprovalAnswered)
    assert answered.choice == "once"
    [finished] = run.of(ToolCallFinished)
    assert finished.outcome == "ok" and "42" in finished.result.text()
    assert run.text == "The sum is 42."
    assert isinstance(run.last, TurnFinished) and run.last.stop_reason == "end_turn"
    assert len(run.of(Usage)) == 2 and run.of(TurnStarted)
    # the result went back to the model in the OpenAI format
    second = models.requests[1].body
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["tool_call_id"] == started.id and "42" in tool_messages[0]["content"]
    # server-everything has more tools than defer_tools: they hide behind tool_search
    [offered] = models.requests[0].body["tools"]
    assert offered["function"]["name"] == "tool_search"
    assert "everything__get-sum" in offered["function"]["description"]
    assert chat.messages[-1].tool_calls[0].outcome == "ok"
    assert run.of(SpendChanged)[0].totals == {"everything": 5.0}


async def test_denied_call_is_reported_as_denied(models) -> None:
    models.script(tool_call("everything__toggle-simulated-logging", {}), text("Okay, not then."))
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        s.person.add("approve_tool", ApprovalAnswer(ApprovalChoice.DENY))
        chat = await s.host.new()
        run = await collect(chat.send("add"))
    [finished] = run.of(ToolCallFinished)
    assert finished.outcome == "denied" and finished.result is None
    assert "denied" in (finished.error or "")
    back = json.dumps(models.requests[1].body["messages"])
    assert "denied the call" in back
    assert run.text == "Okay, not then."
    assert not run.of(TurnFailed)
