"""Model cost from the price table: usage fields (both wire formats) -> each answer's cost
and the chat's, kept in the spend ledger and in the store across a resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.chat.events import TurnFailed, Usage
from portico.config.model import Dialect, ModelPrice, ProviderSpec, Scope, Source
from portico.policy.prompters import NonInteractivePrompter
from portico.prompts import ApprovalChoice
from tests.chat.conftest import chat_setup, collect, provider
from tests.helpers.person import ScriptedPerson
from tests.servers.model_server import ModelServer, text

PRICES = (("gpt-test", ModelPrice(2.0, 8.0)), ("claude-test", ModelPrice(3.0, 15.0)))


@pytest.mark.parametrize(
    ("kind", "in_price", "out_price"), [("openai", 2.0, 8.0), ("anthropic", 3.0, 15.0)]
)
async def test_usage_fields_become_the_turn_and_chat_cost(
    models: ModelServer, tmp_path: Path, kind: str, in_price: float, out_price: float
) -> None:
    models.script(
        text("one", usage={"input": 1000, "output": 500}),
        text("two", usage={"input": 3000, "output": 250}),
    )
    spec = provider(models, kind=kind, prices=PRICES, currency="EUR")
    store = tmp_path / "chats.db"
    async with chat_setup(providers=(spec,), store_path=store) as s:
        chat = await s.host.new()
        first = (await collect(chat.send("hi"))).of(Usage)[-1]
        second = (await collect(chat.send("again"))).of(Usage)[-1]
        chat_id = chat.id
    one = (1000 * in_price + 500 * out_price) / 1e6
    two = (3000 * in_price + 250 * out_price) / 1e6
    assert first.cost == pytest.approx(one) and first.turn_cost == pytest.approx(one)
    assert first.currency == "EUR"
    assert second.cost == pytest.approx(two)
    assert second.total_cost == pytest.approx(one + two)
    assert chat.cost == pytest.approx(one + two)
    # the ledger is stored with the chat: a resumed chat goes on from the same total
    async with chat_setup(providers=(spec,), store_path=store) as s:
        resumed = await s.host.open(chat_id)
        assert resumed.cost == pytest.approx(one + two)
        assert resumed.currency == "EUR"


async def test_a_model_without_a_price_costs_nothing_shown(models: ModelServer) -> None:
    models.script(text("free", usage={"input": 10, "output": 5}))
    priced_other = (("other-model", ModelPrice(1.0, 1.0)),)
    async with chat_setup(providers=(provider(models, prices=priced_other),)) as s:
        chat = await s.host.new()
        [usage] = (await collect(chat.send("hi"))).of(Usage)
    assert (usage.cost, usage.total_cost, usage.currency) == (None, None, "")
    assert usage.input_tokens == 10 and chat.cost == 0.0


def test_a_dated_snapshot_takes_the_price_of_its_family() -> None:
    p = ProviderSpec(
        "p",
        Source(Path("/c.yaml"), 1, Scope.GLOBAL, Dialect.YAML),
        prices=(("gpt-4.1", ModelPrice(2, 8)), ("gpt-4.1-mini", ModelPrice(0.4, 1.6))),
    )
    assert p.price("gpt-4.1-mini-2025-04-14") == ModelPrice(0.4, 1.6)
    assert p.price("gpt-4.1-2025-04-14") == ModelPrice(2, 8)
    assert p.price("gpt-4o") is None


EXPENSIVE = (("gpt-test", ModelPrice(1000.0, 1000.0)), ("claude-test", ModelPrice(1000.0, 1000.0)))
# each answer costs (300 + 100) * 1000 / 1e6 = 0.4; a request's top is well under 0.55
# alone (its estimated input + max_tokens 100) but not on top of one answer
COSTLY = {"input": 300, "output": 100}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_request_past_the_spend_limit_asks_and_a_denied_one_is_not_sent(
    models: ModelServer, kind: str
) -> None:
    models.script(text("one", usage=COSTLY), text("two", usage=COSTLY))
    spec = provider(models, kind=kind, prices=EXPENSIVE, spend_limit=0.55, max_tokens=100)
    person = ScriptedPerson()
    async with chat_setup(providers=(spec,), prompter=person) as s:
        chat = await s.host.new()
        await collect(chat.send("first"))
        assert person.asked == []  # 0 + its top is under the limit
        person.add("approve_spend", ApprovalChoice.ONCE)
        second = await collect(chat.send("second"))
        [asked] = person.requests("approve_spend")
        assert asked.limit_line == (
            "This request could take the chat past the limit of $0.5500 on 'scripted'."
        )
        assert asked.spend_line == "This chat has used about $0.4000 on 'scripted'."
        assert second.text == "two" and chat.cost == pytest.approx(0.8)
        # past the limit: every further request asks; denied, it is not sent
        person.add("approve_spend", ApprovalChoice.DENY)
        third = await collect(chat.send("third"))
        assert person.requests("approve_spend")[-1].limit_line.startswith(
            "This chat already reached the limit of $0.5500 on 'scripted'"
        )
    assert len(models.requests) == 2
    failed = third.of(TurnFailed)[0]
    assert failed.kind == "spend" and failed.retryable
    assert "The request was not approved (declined)" in failed.error


async def test_nobody_to_ask_refuses_a_request_past_the_limit(models: ModelServer) -> None:
    models.script(text("one", usage=COSTLY))
    spec = provider(models, prices=EXPENSIVE, spend_limit=0.55, max_tokens=100)
    async with chat_setup(providers=(spec,), prompter=NonInteractivePrompter(lambda _t: None)) as s:
        chat = await s.host.new()
        await collect(chat.send("first"))
        second = await collect(chat.send("second"))
    assert len(models.requests) == 1
    [failed] = second.of(TurnFailed)
    assert failed.kind == "spend" and "Nobody can approve that here" in failed.error
    assert chat.messages[-1].status == "failed"  # the question is kept for a retry
