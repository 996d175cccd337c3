"""Rules without a test elsewhere: the non-interactive refusal texts, the OAuth client
configuration in the trust digest, and the sampling model override, rate window and
log level."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import types

from portico.config.model import OAuthSpec, SamplingSpec, TrustLevel
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.sampling import SamplingPolicy
from portico.policy.trust import TrustGate
from portico.policy.trust_store import TrustStore
from portico.prompts import (
    AuthorizeRequest,
    DeviceCodeRequest,
    ElicitationRequest,
    Refused,
    SamplingMessage,
    SamplingRequest,
    TrustChoice,
)
from tests.helpers.logs import AllowLogs
from tests.helpers.models import ScriptedModel

from .conftest import ScriptedPerson, asker_spec
from .test_trust_http import Dns, http_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

# --- NonInteractivePrompter: what each refusal tells the person to do ---------------------


async def refusal(question: Any) -> str:
    with pytest.raises(Refused) as caught:
        await question
    return str(caught.value)


async def test_non_interactive_refusal_texts() -> None:
    quiet = NonInteractivePrompter(sink=lambda _text: None)
    authorize = AuthorizeRequest(
        server="docs",
        authorize_url="https://auth.example/authorize?x=1",
        redirect_uri="http://127.0.0.1:33418/mcp/oauth/callback",
        timeout=300.0,
        browser_opened=False,
    )
    assert await refusal(quiet.authorize(authorize)) == (
        "server 'docs' needs you to sign in: run 'portico mcp login docs' or sign in from the app"
    )
    device = DeviceCodeRequest(
        server="docs",
        verification_uri="https://auth.example/device",
        user_code="ABCD-EFGH",
        verification_uri_complete=None,
        expires_in=600.0,
        interval=5.0,
    )
    assert await refusal(quiet.device_code(device)) == (
        "server 'docs' needs you to sign in: run 'portico mcp login docs --flow device' or "
        "sign in from the app"
    )
    elicit = ElicitationRequest(server="docs", message="Which branch?")
    assert await refusal(quiet.elicit(elicit)) == (
        "server 'docs' asked the person a question and nobody can answer here: run this "
        "from the app or an interactive 'portico chat'"
    )
    sampling = SamplingRequest(
        server="docs",
        messages=(SamplingMessage("user", "hi"),),
        system_prompt=None,
        requested_model=None,
        model="(default model)",
        max_tokens=100,
    )
    assert await refusal(quiet.review_sampling(sampling)) == (
        "server 'docs' asked to use the model and nobody can review the request here: run "
        "this from the app, or set trust = \"full\" for 'docs' to let it sample without review"
    )


# --- the OAuth client configuration is part of what was trusted ---------------------------


async def test_oauth_client_change_asks_for_trust_again(
    project: Path, person: ScriptedPerson
) -> None:
    dns = Dns({"intranet.portico.test": ["10.1.2.3"]})
    store = TrustStore()
    url = "https://intranet.portico.test/mcp"
    spec = http_spec(project, url, oauth=OAuthSpec(client_id="portico-a", scope="read"))
    person.add("review_trust", TrustChoice.TRUST)
    assert (await TrustGate(person, resolver=dns, store=store)(spec)).allowed
    quiet = TrustGate(NonInteractivePrompter(sink=lambda _t: None), resolver=dns, store=store)
    assert (await quiet(spec)).allowed  # the saved decision
    # how long a login waits is not part of what runs: still trusted
    slower = replace(spec, oauth=replace(spec.oauth, timeout=900.0))
    assert (await quiet(slower)).allowed
    for changed in (
        replace(spec, oauth=replace(spec.oauth, client_id="portico-b")),
        replace(spec, oauth=replace(spec.oauth, client_secret="${keyring:other}")),
        replace(spec, oauth=replace(spec.oauth, scope="read write")),
        replace(spec, oauth=None),
    ):
        verdict = await quiet(changed)
        assert not verdict.allowed, changed.oauth
        assert verdict.reasons[0].startswith(
            f"server 'web' in {project}/.portico/mcp.toml is waiting for trust review: run "
            "'portico mcp trust web' or open it in the app"
        )


# --- sampling: model override, rate window, log level ----------------------------------------


def params(text: str = "hi", model: str | None = None) -> types.CreateMessageRequestParams:
    prefs = types.ModelPreferences(hints=[types.ModelHint(name=model)]) if model else None
    return types.CreateMessageRequestParams(
        messages=[
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
        max_tokens=100,
        model_preferences=prefs,
    )


def full_trust(**sampling: Any):  # type: ignore[no-untyped-def]
    return asker_spec("s", trust=TrustLevel.FULL, sampling=SamplingSpec(**sampling))


async def test_configured_model_overrides_the_requested_one() -> None:
    model = ScriptedModel()
    policy = SamplingPolicy(NonInteractivePrompter(), model, default_model="house-model")
    result = await policy.handle(full_trust(model="pinned-model"), params(model="big"))
    assert isinstance(result, types.CreateMessageResult)
    assert result.model == "pinned-model"
    assert [call[2] for call in model.calls] == ["pinned-model"]
    # without an override the server's preference is used, then the default
    await policy.handle(full_trust(), params(model="big"))
    await policy.handle(full_trust(), params())
    assert [call[2] for call in model.calls] == ["pinned-model", "big", "house-model"]


async def test_max_rpm_is_a_sliding_window() -> None:
    model = ScriptedModel()
    window = 1.5
    policy = SamplingPolicy(NonInteractivePrompter(), model, rate_window=window)
    spec = full_trust(max_rpm=2)
    first = await policy.handle(spec, params("one"))
    second = await policy.handle(spec, params("two"))
    third = await policy.handle(spec, params("three"))
    assert isinstance(first, types.CreateMessageResult)
    assert isinstance(second, types.CreateMessageResult)
    assert isinstance(third, types.ErrorData)
    assert third.message == (
        "rate limit: server 's' may make 2 sampling requests per minute (sampling.max_rpm); "
        "try again later"
    )
    assert len(model.calls) == 2
    # once the window has slid past the first two, requests are accepted again
    await asyncio.sleep(window + 0.2)
    fourth = await policy.handle(spec, params("four"))
    assert isinstance(fourth, types.CreateMessageResult)
    assert policy.metrics_for("s").requests == 4 and policy.metrics_for("s").errors == 1


@pytest.mark.parametrize(
    ("level", "expected"), [("debug", logging.DEBUG), ("warning", logging.WARNING)]
)
async def test_log_level_is_honoured(
    level: str, expected: int, caplog: pytest.LogCaptureFixture, allow_logs: AllowLogs
) -> None:
    allow_logs(r"^sampling for s: model scripted-1")
    allow_logs(r"^sampling request of s refused: rate limit")
    caplog.set_level(logging.DEBUG, logger="portico.policy.sampling")
    policy = SamplingPolicy(NonInteractivePrompter(), ScriptedModel())
    spec = full_trust(log_level=level, max_rpm=1)
    await policy.handle(spec, params())
    await policy.handle(spec, params())  # refused by the rate limit: logged too
    records = [r for r in caplog.records if r.name == "portico.policy.sampling"]
    assert [r.levelno for r in records] == [expected, expected]
    assert "sampling for s: model scripted-1" in records[0].getMessage()
    assert "sampling request of s refused: rate limit" in records[1].getMessage()
