"""The app's InlinePrompter routes a question by the caller and call id it carries: a
question of the visible chat goes to its call's card at once, anything else straight to
the dialogs (it used to wait up to 1 s for an event to match the question against)."""

from __future__ import annotations

import asyncio
import time

from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    Caller,
    ToolApprovalRequest,
)
from portico.ui.runtime_thread.chat_service import InlineApproval, InlinePrompter
from tests.helpers.person import ScriptedPerson

OLD_MATCH_WAIT = 1.0  # what a question waited for its event before


def _request(call_id: str, caller: Caller) -> ToolApprovalRequest:
    same = {"text": "the same words"}
    return ToolApprovalRequest(
        "tb",
        "echo",
        "tb__echo",
        "",
        same,
        '{"text": "the same words"}',
        call_id=call_id,
        caller=caller,
    )


async def test_a_question_from_outside_the_visible_chat_goes_to_the_dialog_at_once() -> None:
    person = ScriptedPerson()
    person.add(
        "approve_tool", ApprovalAnswer(ApprovalChoice.ONCE), ApprovalAnswer(ApprovalChoice.DENY)
    )
    shown: list[object] = []
    inline = InlinePrompter(person, lambda chat_id, event: shown.append(event))
    inline.visible = "c1"
    for caller in (Caller("try_it"), Caller("chat", "c2")):
        started = time.monotonic()
        await inline.approve_tool(_request("x", caller))
        assert time.monotonic() - started < 0.3 * OLD_MATCH_WAIT
    assert shown == [] and len(person.requests("approve_tool")) == 2


async def test_two_questions_with_the_same_arguments_go_to_their_own_cards() -> None:
    shown: list[tuple[str, object]] = []
    inline = InlinePrompter(ScriptedPerson(), lambda chat_id, event: shown.append((chat_id, event)))
    inline.visible = "c1"
    chat = Caller("chat", "c1")
    first = asyncio.ensure_future(inline.approve_tool(_request("a", chat)))
    second = asyncio.ensure_future(inline.approve_tool(_request("b", chat)))
    started = time.monotonic()
    while len(shown) < 2:
        assert time.monotonic() - started < 0.3 * OLD_MATCH_WAIT, shown
        await asyncio.sleep(0)
    assert [(c, e.call_id) for c, e in shown if isinstance(e, InlineApproval)] == [
        ("c1", "a"),
        ("c1", "b"),
    ]
    assert inline.answer("b", "deny") and inline.answer("a", "once")
    assert (await first).choice is ApprovalChoice.ONCE
    assert (await second).choice is ApprovalChoice.DENY
    assert not inline.answer("a", "once")  # answered: nothing waits any more
