"""Project-server trust for HTTP servers: each reason, DNS failure, public HTTPS, pinning."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.config.model import Scope, Transport
from portico.policy.netcheck import address_class, check_url
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.policy.trust import TrustGate
from portico.policy.trust_store import TrustStore
from portico.prompts import TrustChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from tests.helpers.dns import Dns
from tests.helpers.servers import free_port, wait_port

from .conftest import ASKER, ScriptedPerson, config_of, spec_for

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.fixture(scope="module")
def asker_http() -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ASKER), "http", "--port", str(port), "--allow-host", "mcp.test"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
    except RuntimeError:
        proc.kill()
        raise
    yield port
    proc.kill()
    proc.wait(timeout=10)


def http_spec(project: Path, url: str, name: str = "web", **fields):  # type: ignore[no-untyped-def]
    fields.setdefault("connect_timeout", 30.0)
    return spec_for(
        name, scope=Scope.PROJECT, project=project, transport=Transport.HTTP, url=url, **fields
    )


async def test_plaintext_loopback_server_waits_then_connects_once(
    asker_http: int, project: Path, person: ScriptedPerson
) -> None:
    url = f"http://127.0.0.1:{asker_http}/mcp"
    spec = http_spec(project, url, headers={"Authorization": "Bearer sekrit-token"})
    async with Hub(hooks=Policy(NonInteractivePrompter()).hooks()) as hub:
        await hub.apply(config_of(spec))
        state = hub.connection("web").state
        assert state.status is Status.AWAITING_TRUST
        assert "plaintext http://" in (state.error or "")
        assert "127.0.0.1 is a loopback address" in (state.error or "")
    person.add("review_trust", TrustChoice.ONCE)
    async with Hub(hooks=Policy(person).hooks()) as hub:
        await hub.apply(config_of(spec))
        assert hub.connection("web").state.status is Status.RUNNING
        [request] = person.requests("review_trust")
        assert request.target == url and request.transport == "http"
        assert request.header_names == ("Authorization",)
        assert "sekrit-token" not in repr(request)
        assert len(request.reasons) == 2


async def test_each_http_reason_in_plain_words() -> None:
    dns = Dns(
        {
            "public.example": ["93.184.216.34"],
            "intranet.example": ["10.1.2.3"],
            "mixed.example": ["93.184.216.34", "192.168.1.5"],
            "linklocal.example": ["169.254.169.254"],
            "reserved.example": ["240.0.0.1"],
            "v6.example": ["::1"],
        }
    )
    clean = await check_url("https://public.example/mcp", dns)
    assert clean.clean and clean.addresses == {"public.example": ("93.184.216.34",)}
    plain = await check_url("http://public.example/mcp", dns)
    assert plain.reasons == (
        "the URL uses plaintext http://, so anyone on the network path can read or change "
        "the traffic",
    )
    creds = await check_url("https://user:pw@public.example/mcp", dns)
    assert creds.reasons == ("the URL carries credentials (user:password@) in plain text",)
    failed = await check_url("https://nowhere.example/mcp", dns)
    assert failed.dns_failed and "DNS lookup of 'nowhere.example' failed" in failed.reasons[0]
    private = await check_url("https://intranet.example/mcp", dns)
    assert private.reasons == ("'intranet.example' resolves to 10.1.2.3, a private address",)
    mixed = await check_url("https://mixed.example/mcp", dns)
    assert mixed.reasons == ("'mixed.example' resolves to 192.168.1.5, a private address",)
    link = await check_url("https://linklocal.example/mcp", dns)
    assert "a link-local address" in link.reasons[0]
    reserved = await check_url("https://reserved.example/mcp", dns)
    assert "a reserved address" in reserved.reasons[0]
    v6 = await check_url("https://v6.example/mcp", dns)
    assert "::1, a loopback address" in v6.reasons[0]
    assert address_class("fd00::1") == "a private address"
    assert address_class("::ffff:127.0.0.1") == "a loopback address"
    assert address_class("100.64.0.1") is not None  # shared address space is not public
    assert address_class("8.8.8.8") is None


async def test_public_https_connects_without_review_and_is_pinned(project: Path) -> None:
    dns = Dns({"docs.example": ["93.184.216.34"]})
    gate = TrustGate(NonInteractivePrompter(), resolver=dns)
    spec = http_spec(project, "https://docs.example/mcp")
    verdict = await gate(spec)
    assert verdict.allowed and verdict.pinned == {"docs.example": ("93.184.216.34",)}
    assert gate.pinned_addresses(spec) == {"docs.example": ["93.184.216.34"]}


async def test_dns_pinning_keeps_the_reviewed_address(
    project: Path, person: ScriptedPerson
) -> None:
    dns = Dns({"mcp.test": ["127.0.0.1"]})
    gate = TrustGate(person, resolver=dns)
    spec = http_spec(project, "http://mcp.test:9/mcp")
    person.add("review_trust", TrustChoice.ONCE)
    first = await gate(spec)
    assert first.allowed and first.pinned == {"mcp.test": ("127.0.0.1",)}
    [request] = person.requests("review_trust")
    assert "'mcp.test' resolves to 127.0.0.1, a loopback address" in request.reasons
    # DNS now answers something else: the reconnect still uses the reviewed address and
    # DNS is not even asked again
    dns.table["mcp.test"] = ["10.66.66.66"]
    again = await gate(spec)
    assert again.allowed and again.pinned == {"mcp.test": ("127.0.0.1",)}
    assert gate.pinned_addresses(spec) == {"mcp.test": ["127.0.0.1"]}
    assert dns.lookups == ["mcp.test"]
    assert len(person.requests("review_trust")) == 1


async def test_trust_cannot_persist_while_dns_fails(project: Path, person: ScriptedPerson) -> None:
    dns = Dns({})
    store = TrustStore()
    gate = TrustGate(person, resolver=dns, store=store)
    spec = http_spec(project, "https://down.example/mcp")
    person.add("review_trust", TrustChoice.TRUST)
    verdict = await gate(spec)
    [request] = person.requests("review_trust")
    assert request.can_persist is False
    assert "DNS lookup of 'down.example' failed" in request.reasons[0]
    assert verdict.allowed  # for this process only
    assert store.decision_for(spec) is None
    assert any("was not saved" in n.text for n in person.notices)
    # once DNS works and it is trusted, the decision is saved
    dns.table["down.example"] = ["10.0.0.7"]
    person.add("review_trust", TrustChoice.TRUST)
    fresh = TrustGate(person, resolver=dns, store=store)
    assert (await fresh(spec)).allowed
    assert store.decision_for(spec) == "trust"


async def test_url_change_or_header_change_asks_again(
    project: Path, person: ScriptedPerson
) -> None:
    dns = Dns({"a.example": ["10.0.0.1"], "b.example": ["10.0.0.2"]})
    person.add("review_trust", TrustChoice.TRUST)
    spec = http_spec(project, "https://a.example/mcp", headers={"X-Key": "one"})
    assert (await TrustGate(person, resolver=dns)(spec)).allowed
    quiet = TrustGate(NonInteractivePrompter(), resolver=dns)
    assert (await quiet(spec)).allowed  # saved
    moved = http_spec(project, "https://b.example/mcp", headers={"X-Key": "one"})
    assert not (await quiet(moved)).allowed
    rekeyed = http_spec(project, "https://a.example/mcp", headers={"X-Key": "two"})
    assert not (await quiet(rekeyed)).allowed


async def test_runtime_connects_to_the_pinned_address(
    asker_http: int, project: Path, person: ScriptedPerson
) -> None:
    # 'mcp.test' exists only in our resolver: the connection can only work if the HTTP
    # client dials the address pinned at the review
    dns = Dns({"mcp.test": ["127.0.0.1"]})
    person.add("review_trust", TrustChoice.ONCE)
    policy = Policy(person, resolver=dns)
    spec = http_spec(project, f"http://mcp.test:{asker_http}/mcp")
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        state = hub.connection("web").state
        assert state.status is Status.RUNNING, state.error
        # a later DNS answer cannot move the connection
        dns.table["mcp.test"] = ["10.66.66.66"]
        await hub.restart("web")
        state = hub.connection("web").state
        assert state.status is Status.RUNNING, state.error
        assert dns.lookups == ["mcp.test"]
        assert len(person.requests("review_trust")) == 1
