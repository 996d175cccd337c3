"""Spend: costs in the prompts, per-chat totals, the limit prompt, refusals."""

from __future__ import annotations

import asyncio
import sys

import pytest

from portico.config.model import ToolCost, TrustLevel
from portico.policy.guard import ChatContext
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.prompts import ApprovalAnswer, ApprovalChoice
from portico.runtime.hub import Hub

from .conftest import TOOLBOX, ScriptedPerson, asker_spec, config_of, spec_for

pytestmark = pytest.mark.slow  # talks to real servers or processes

COSTS = (
    ("render", ToolCost(20, 20)),
    ("animate", ToolCost(5, 20, "per animation")),
    ("status", ToolCost(0, 0)),
)


def renders(**fields):  # type: ignore[no-untyped-def]
    fields.setdefault("tool_costs", COSTS)
    fields.setdefault("spend_limit", 50)
    return asker_spec("renders", **fields)


async def test_cost_lines_and_totals_per_chat(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(renders(spend_limit=100)))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_tool", ApprovalAnswer(ApprovalChoice.ONCE))
        await guard.call(chat, "renders__render", {"prompt": "cat"})
        first = person.requests("approve_tool")[0]
        assert first.cost_line == "Costs about 20 credits."
        assert first.spend_line is None  # nothing spent yet
        person.add("approve_tool", ApprovalAnswer(ApprovalChoice.ONCE))
        await guard.call(chat, "renders__animate", {"frames": 2})
        second = person.requests("approve_tool")[1]
        assert second.cost_line == "Costs 5-20 credits (per animation)."
        assert second.spend_line == "This chat has used about 20 credits on 'renders' (limit 100)."
        assert chat.spend.total("renders") == 40  # the top of the range counts
        # a denied call adds nothing
        person.add("approve_tool", ApprovalAnswer(ApprovalChoice.DENY))
        denied = await guard.call(chat, "renders__render", {"prompt": "dog"})
        assert denied.is_error and chat.spend.total("renders") == 40
        # a branch keeps the totals, a new chat starts at zero
        branch = chat.branch()
        assert branch.spend.total("renders") == 40
        person.add("approve_tool", ApprovalAnswer(ApprovalChoice.ONCE))
        await guard.call(branch, "renders__render", {"prompt": "b"})
        assert chat.spend.total("renders") == 60
        assert ChatContext().spend.total("renders") == 0
        # a free tool (cost 0) shows no cost
        assert (await guard.call(chat, "renders__status", {})).text() == "all good"


async def test_limit_prompt_offers_only_once_and_deny_even_on_trust_full(
    person: ScriptedPerson,
) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(renders(trust=TrustLevel.FULL, spend_limit=50)))
        guard = policy.guard(hub.registry, yolo=True)
        chat = ChatContext(yolo=True)
        # below the limit: trust full runs costed tools without asking
        for prompt in ("a", "b"):
            result = await guard.call(chat, "renders__render", {"prompt": prompt})
            assert result.text() == f"rendered {prompt}"
        assert person.asked == [] and chat.spend.total("renders") == 40
        # the next one would pass 50: it asks, with Allow Once and Deny only
        person.add("approve_spend", ApprovalChoice.DENY)
        denied = await guard.call(chat, "renders__render", {"prompt": "c"})
        assert denied.is_error and chat.spend.total("renders") == 40
        [request] = person.requests("approve_spend")
        assert request.choices == (ApprovalChoice.ONCE, ApprovalChoice.DENY)
        assert request.cost_line == "Costs about 20 credits."
        assert request.spend_line == "This chat has used about 40 credits on 'renders' (limit 50)."
        assert request.limit_line == (
            "This call would take the chat past the limit of 50 credits on 'renders'."
        )
        person.add("approve_spend", ApprovalChoice.ONCE)
        ok = await guard.call(chat, "renders__render", {"prompt": "c"})
        assert ok.text() == "rendered c" and chat.spend.total("renders") == 60
        # every further costed call in that chat asks again, even a cheap one
        person.add("approve_spend", ApprovalChoice.ONCE)
        await guard.call(chat, "renders__animate", {"frames": 1})
        assert len(person.requests("approve_spend")) == 3
        # and says the limit was reached, not that this call would pass it
        assert person.requests("approve_spend")[-1].limit_line == (
            "This chat already reached the limit of 50 credits on 'renders': "
            "every further costed call asks first."
        )
        # a new chat starts fresh
        fresh = ChatContext(yolo=True)
        assert (await guard.call(fresh, "renders__render", {"prompt": "n"})).text() == "rendered n"
        assert len(person.requests("approve_spend")) == 3


async def test_limit_with_approvals_off_and_nobody_to_ask_is_refused() -> None:
    policy = Policy(NonInteractivePrompter())
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(renders(spend_limit=30), approvals_mode="off"))
        guard = policy.guard(
            hub.registry, approvals_off=lambda: hub.settings.approvals_mode == "off"
        )
        chat = ChatContext()
        first = await guard.call(chat, "renders__render", {"prompt": "a"})
        assert first.text() == "rendered a"
        second = await guard.call(chat, "renders__render", {"prompt": "b"})
        assert second.is_error
        assert "Refused without running" in second.text()
        assert "Do not retry this call" in second.text()
        assert chat.spend.total("renders") == 20
        count = await guard.call(chat, "renders__count", {})
        assert count.text() == "1"  # the refused call never reached the server


async def test_a_call_whose_server_dies_still_counts(person: ScriptedPerson) -> None:
    policy = Policy(person)
    spec = spec_for(
        "tb",
        command=sys.executable,
        args=(str(TOOLBOX), "stdio"),
        connect_timeout=30.0,
        trust=TrustLevel.FULL,
        tool_costs=(("crash", ToolCost(7, 7)),),
    )
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        try:
            result = await guard.call(chat, "tb__crash", {"code": 3})
        except Exception as exc:  # the registry may raise or return an error
            message = str(exc)
        else:
            assert result.is_error
            message = result.text()
        assert message
        assert chat.spend.total("tb") == 7


async def test_parallel_costed_calls_cannot_both_slip_under_the_limit(
    person: ScriptedPerson,
) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(renders(trust=TrustLevel.FULL, spend_limit=30)))
        guard = policy.guard(hub.registry)
        chat = ChatContext()
        person.add("approve_spend", ApprovalChoice.DENY)
        results = await asyncio.gather(
            guard.call(chat, "renders__render", {"prompt": "one"}),
            guard.call(chat, "renders__render", {"prompt": "two"}),
        )
        assert sorted(r.is_error for r in results) == [False, True]
        assert len(person.requests("approve_spend")) == 1
        assert chat.spend.total("renders") == 20
