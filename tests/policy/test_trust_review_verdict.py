"""After a trust review (the app's Review trust…), the server goes on from the verdict the
review gave, through ``Hub.admit``: the gate is not asked a second time. Through
``hub.retry`` it was: a review the person had just declined was asked again at once, and
every answer cost another check (DNS lookup, pinned files) of the same spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.policy.setup import Policy
from portico.prompts import TrustChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from tests.helpers.dns import Dns

from .conftest import ScriptedPerson, config_of
from .test_trust_http import http_spec
from .test_trust_stdio import project_asker


def intranet(project: Path):  # type: ignore[no-untyped-def]
    """A project server on a private address: reviewed, and never dialled in these tests."""
    return http_spec(project, "https://intranet.portico.test/mcp", name="intranet")


async def test_a_review_declined_again_is_not_asked_a_second_time(
    project: Path, person: ScriptedPerson
) -> None:
    person.add("review_trust", TrustChoice.DECLINE, TrustChoice.DECLINE)
    dns = Dns({"intranet.portico.test": ["10.1.2.3"]})
    policy = Policy(person, resolver=dns)
    spec = intranet(project)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        assert hub.connection("intranet").state.status is Status.AWAITING_TRUST
        verdict = await policy.trust.review(spec)  # Review trust…: the person declines again
        assert not verdict.allowed
        state = await hub.admit("intranet", spec, verdict)
        assert state.status is Status.AWAITING_TRUST
        assert "is waiting for trust review" in (state.error or "")
        # two questions (the start, the review), two lookups: no third of either
        assert len(person.requests("review_trust")) == 2
        assert dns.lookups == ["intranet.portico.test"] * 2


async def test_a_rejection_at_review_parks_the_server_from_the_verdict(
    project: Path, person: ScriptedPerson
) -> None:
    person.add("review_trust", TrustChoice.DECLINE, TrustChoice.REJECT)
    dns = Dns({"intranet.portico.test": ["10.1.2.3"]})
    policy = Policy(person, resolver=dns)
    spec = intranet(project)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        verdict = await policy.trust.review(spec)
        state = await hub.admit("intranet", spec, verdict)
        assert state.status is Status.REJECTED
        assert state.error == "server 'intranet' was rejected at its trust review"
        assert dns.lookups == ["intranet.portico.test"] * 2  # the verdict, not a new check


async def test_a_verdict_for_another_spec_is_not_taken(
    project: Path, person: ScriptedPerson
) -> None:
    """The config changed between the review and the start: the gate asks as usual."""
    person.add("review_trust", TrustChoice.DECLINE, TrustChoice.DECLINE, TrustChoice.DECLINE)
    dns = Dns({"intranet.portico.test": ["10.1.2.3"]})
    policy = Policy(person, resolver=dns)
    spec = intranet(project)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        old = http_spec(project, "https://intranet.portico.test/old", name="intranet")
        verdict = await policy.trust.review(old)
        state = await hub.admit("intranet", old, verdict)
        assert state.status is Status.AWAITING_TRUST
        assert len(person.requests("review_trust")) == 3  # the running spec was asked about
        assert person.requests("review_trust")[2].target == "https://intranet.portico.test/mcp"


@pytest.mark.slow  # starts a real stdio server
async def test_connect_once_at_review_starts_from_the_verdict(
    project: Path, person: ScriptedPerson
) -> None:
    person.add("review_trust", TrustChoice.DECLINE, TrustChoice.ONCE)
    policy = Policy(person)
    spec = project_asker(project)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        assert hub.connection("docs").state.status is Status.AWAITING_TRUST
        verdict = await policy.trust.review(spec)
        assert verdict.allowed
        state = await hub.admit("docs", spec, verdict)
        assert state.status is Status.RUNNING
        assert len(person.requests("review_trust")) == 2
