"""A 2026-07-28 call held across the client's retries (``gateway/input_rounds.py``): what
the backend sends after an answer reaches the client's live leg, a retry goes on only with
the call its requestState was issued for, and no leg is answered with an empty question."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import mcp_types as types
import pytest

from portico.config.model import TrustLevel
from portico.gateway.input_rounds import HeldCall, InputRounds
from tests.gateway.helpers import sdk_client, serving, texts
from tests.helpers.person import ScriptedPerson
from tests.helpers.specs import asker_spec

SURVEY = "asker__survey"


def answer(key: str, text: str) -> dict[str, Any]:
    return {key: types.ElicitResult(action="accept", content={"answer": text})}


async def never_asked(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("a held call's question goes in an input-required result")


@pytest.mark.slow
@pytest.mark.usefixtures("memory_keyring")
async def test_progress_after_the_clients_answer_goes_to_the_retry_not_the_first_leg() -> None:
    heard: dict[str, list[str]] = {"first": [], "retry": []}
    retry_heard = asyncio.Event()

    def hearing(leg: str) -> Any:
        async def hear(progress: float, total: float | None, message: str | None) -> None:
            heard[leg].append(message or "")
            if leg == "retry":
                retry_heard.set()

        return hear

    async with serving(ScriptedPerson(), asker_spec(trust=TrustLevel.FULL)) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, elicitation_callback=never_asked) as c:
            first = await c.session.call_tool(
                SURVEY, {}, progress_callback=hearing("first"), allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult), first
            assert first.input_requests is not None
            ((key, _request),) = first.input_requests.items()
            done = await c.session.call_tool(
                SURVEY,
                {},
                progress_callback=hearing("retry"),
                input_responses=answer(key, "yes"),
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult), done
            assert texts(done) == "yes"
            # the SDK client runs progress callbacks in tasks of their own
            await asyncio.wait_for(retry_heard.wait(), 10)
    assert heard == {"first": [], "retry": ["answered yes"]}


@pytest.mark.slow
@pytest.mark.usefixtures("memory_keyring")
async def test_a_retry_naming_another_tool_is_refused_and_the_state_stays_for_its_call() -> None:
    from mcp import MCPError

    async with serving(ScriptedPerson(), asker_spec(trust=TrustLevel.FULL)) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, elicitation_callback=never_asked) as c:
            first = await c.session.call_tool(SURVEY, {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            assert first.input_requests is not None
            ((key, _request),) = first.input_requests.items()
            with pytest.raises(MCPError, match="belongs to a call of 'asker__survey', not"):
                await c.session.call_tool(
                    "asker__form",
                    {},
                    input_responses=answer(key, "wrong"),
                    request_state=first.request_state,
                    allow_input_required=True,
                )
            done = await c.session.call_tool(
                SURVEY,
                {},
                input_responses=answer(key, "right"),
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult), done
            assert texts(done) == "right"
    outcomes = [
        (e.target, e.outcome)
        for e in running.endpoint.gateway.activity.entries()
        if e.outcome.startswith("refused")
    ]
    assert outcomes == [("asker__form", "refused: requestState of another tool")]


# The backend's side of a held call, in this loop: questions raised and withdrawn in
# exactly the moment InputRounds.next gives a sibling question to arrive (one loop step).

QUESTION = types.ElicitRequest(
    params=types.ElicitRequestFormParams(
        message="Still there?", requested_schema={"type": "object", "properties": {}}
    )
)
DONE = types.CallToolResult(content=[types.TextContent(type="text", text="done")])


async def test_a_question_withdrawn_as_it_is_raised_is_not_put_to_the_client() -> None:
    rounds = InputRounds()
    held = HeldCall("ide", "asker__survey")

    async def backend() -> types.CallToolResult:
        withdrawn = asyncio.ensure_future(rounds.ask(held, QUESTION, types.ElicitResult))
        await asyncio.sleep(0)  # the question is raised...
        withdrawn.cancel()  # ...and withdrawn before the client was shown it
        with contextlib.suppress(asyncio.CancelledError):
            await withdrawn
        await rounds.ask(held, QUESTION, types.ElicitResult)
        return DONE

    result = await asyncio.wait_for(rounds.next(rounds.start("ide", backend(), held)), 5)
    assert isinstance(result, types.InputRequiredResult), result
    assert result.input_requests is not None
    assert list(result.input_requests) == list(held.asked)  # the second question only
    assert [r.method for r in result.input_requests.values()] == ["elicitation/create"]
    assert held.task is not None
    held.task.cancel()
    rounds.close()


async def test_a_call_that_ends_as_its_question_is_raised_answers_with_its_result() -> None:
    rounds = InputRounds()
    held = HeldCall("ide", "asker__survey")

    async def backend() -> types.CallToolResult:
        asking = asyncio.ensure_future(rounds.ask(held, QUESTION, types.ElicitResult))
        await asyncio.sleep(0)  # the question is raised...
        await asyncio.sleep(0)  # ...the endpoint looks for a sibling question...
        asking.cancel()  # ...and the call ends
        return DONE

    result = await asyncio.wait_for(rounds.next(rounds.start("ide", backend(), held)), 5)
    assert result is DONE
    rounds.close()
