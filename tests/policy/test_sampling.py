"""Sampling end to end: the asker server asks our model through the hub."""

from __future__ import annotations

import json

import pytest
from mcp import types

from portico.config.model import SamplingSpec, TrustLevel
from portico.policy.sampling import SamplingPolicy
from portico.policy.setup import Policy
from portico.prompts import SamplingAnswer, SamplingMessage
from portico.runtime.hub import Hub
from tests.helpers.models import ScriptedModel

from .conftest import ScriptedPerson, asker_spec, config_of

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def sample(hub: Hub, server: str, **args: object) -> dict[str, str]:
    result = await hub.registry.call(f"{server}__sample", args)
    return json.loads(result.text())


async def test_review_approve_edit_deny_and_metrics(person: ScriptedPerson) -> None:
    model = ScriptedModel()
    policy = Policy(person, provider=model)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("s")))
        person.add("review_sampling", SamplingAnswer("approve"))
        first = await sample(
            hub, "s", prompt="hello", max_tokens=50, model="small", system="be brief"
        )
        assert first == {"model": "small", "text": "answer to hello"}
        [request] = person.requests("review_sampling")
        assert request.messages == (SamplingMessage("user", "hello"),)
        assert request.requested_model == "small" and request.max_tokens == 50
        assert request.system_prompt == "be brief"
        # edit: the person's version is what the model sees
        person.add(
            "review_sampling",
            SamplingAnswer("approve", messages=(SamplingMessage("user", "edited"),), max_tokens=9),
        )
        edited = await sample(hub, "s", prompt="original")
        assert edited["text"] == "answer to edited"
        assert model.calls[-1][3] == 9
        person.add("review_sampling", SamplingAnswer("deny"))
        denied = await sample(hub, "s", prompt="no")
        assert "declined" in denied["error"]
        assert len(model.calls) == 2
        metrics = policy.sampling.metrics_for("s")
        assert metrics.requests == 3 and metrics.errors == 1
        assert metrics.tokens == 24


async def test_trust_full_samples_without_review_and_caps_max_tokens(
    person: ScriptedPerson,
) -> None:
    model = ScriptedModel()
    policy = Policy(person, provider=model)
    spec = asker_spec("f", trust=TrustLevel.FULL, sampling=SamplingSpec(max_tokens_cap=64))
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        result = await sample(hub, "f", prompt="big", max_tokens=100000)
        assert result["text"] == "answer to big"
        assert model.calls[0][3] == 64 and person.asked == []


async def test_rate_limit_timeout_and_allowed_models(person: ScriptedPerson) -> None:
    slow = ScriptedModel(delay=5.0)
    policy = Policy(person, provider=slow)
    spec = asker_spec(
        "lim",
        trust=TrustLevel.FULL,
        sampling=SamplingSpec(max_rpm=2, timeout=0.3, allowed_models=("small",)),
    )
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        timed_out = await sample(hub, "lim", prompt="a", model="small")
        assert "did not answer within 0.3 s (sampling.timeout of 'lim')" in timed_out["error"]
        wrong = await sample(hub, "lim", prompt="b", model="huge")
        assert "model 'huge' is not allowed for 'lim'" in wrong["error"]
        limited = await sample(hub, "lim", prompt="c", model="small")
        assert "rate limit" in limited["error"] and "sampling.max_rpm" in limited["error"]
        assert policy.sampling.metrics_for("lim").errors == 3


async def test_no_model_configured_and_disabled(person: ScriptedPerson) -> None:
    policy = Policy(person)
    off = asker_spec("off", sampling=SamplingSpec(enabled=False))
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("none"), off))
        none = await sample(hub, "none", prompt="x")
        assert "no model is configured" in none["error"]
        disabled = await sample(hub, "off", prompt="x")
        assert "error" in disabled  # the client did not offer sampling to this server
        assert person.asked == []


async def test_tool_round_limit(person: ScriptedPerson) -> None:
    policy = SamplingPolicy(person, ScriptedModel())
    spec = asker_spec("t", trust=TrustLevel.FULL, sampling=SamplingSpec(max_tool_rounds=1))
    use = types.ToolUseContent(type="tool_use", id="1", name="lookup", input={})
    back = types.ToolResultContent(type="tool_result", tool_use_id="1", content=[])
    messages = [
        types.SamplingMessage(role="user", content=types.TextContent(type="text", text="go")),
        types.SamplingMessage(role="assistant", content=use),
        types.SamplingMessage(role="user", content=back),
        types.SamplingMessage(role="assistant", content=use),
        types.SamplingMessage(role="user", content=back),
    ]
    params = types.CreateMessageRequestParams(messages=messages, max_tokens=10)
    result = await policy.handle(spec, params)
    assert isinstance(result, types.ErrorData)
    assert "2 tool rounds" in result.message and "sampling.max_tool_rounds" in result.message
    ok = await policy.handle(
        spec, types.CreateMessageRequestParams(messages=messages[:3], max_tokens=10)
    )
    assert isinstance(ok, types.CreateMessageResult)
