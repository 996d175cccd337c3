"""Project-server trust for stdio servers, end to end through the hub."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from portico.config import load
from portico.config.model import Scope
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.prompts import TrustChoice
from portico.runtime.events import EventBus, Status, StatusChanged
from portico.runtime.hub import Hub

from .conftest import ASKER, ScriptedPerson, asker_spec, config_of, eventually

pytestmark = pytest.mark.slow  # talks to real servers or processes


def project_asker(project: Path, name: str = "docs", **fields):  # type: ignore[no-untyped-def]
    fields.setdefault("env", {"API_KEY": "secret-value-123"})
    return asker_spec(name, scope=Scope.PROJECT, project=project, line=3, **fields)


async def test_non_interactive_start_waits_with_an_actionable_error(project: Path) -> None:
    policy = Policy(NonInteractivePrompter())
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(project_asker(project)))
        state = hub.connection("docs").state
        assert state.status is Status.AWAITING_TRUST
        expected = (
            f"server 'docs' in {project}/.portico/mcp.toml is waiting for trust review: "
            f"run 'portico mcp trust docs' or open it in the app"
        )
        assert state.error is not None and state.error.startswith(expected)
        assert "docs" in policy.trust.pending


async def test_global_servers_start_without_review(person: ScriptedPerson) -> None:
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(asker_spec("global")))
        assert hub.connection("global").state.status is Status.RUNNING
        assert person.asked == []


async def test_review_shows_what_runs_and_connect_once(
    person: ScriptedPerson, project: Path
) -> None:
    person.add("review_trust", TrustChoice.ONCE)
    person.agrees_unsandboxed()
    policy = Policy(person)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(project_asker(project)))
        assert hub.connection("docs").state.status is Status.RUNNING
        [request] = person.requests("review_trust")
        assert request.server == "docs"
        assert request.source == f"{project}/.portico/mcp.toml:3"
        assert request.transport == "stdio"
        assert str(ASKER) in request.target and request.target.startswith(sys.executable)
        assert request.env_names == ("API_KEY",)
        assert "secret-value-123" not in repr(request)
        assert request.reasons and "runs a command" in request.reasons[0]
        assert request.can_persist
        # once = this process: a restart does not ask again
        await hub.restart("docs")
        assert hub.connection("docs").state.status is Status.RUNNING
        assert len(person.requests("review_trust")) == 1
    # ... but nothing was saved: another process asks again
    quiet = Policy(NonInteractivePrompter())
    async with Hub(hooks=quiet.hooks()) as hub:
        await hub.apply(config_of(project_asker(project)))
        assert hub.connection("docs").state.status is Status.AWAITING_TRUST


async def test_trust_persists_and_a_config_change_asks_again(
    person: ScriptedPerson, project: Path
) -> None:
    person.add("review_trust", TrustChoice.TRUST)
    person.agrees_unsandboxed()
    async with Hub(hooks=Policy(person).hooks()) as hub:
        await hub.apply(config_of(project_asker(project)))
        assert hub.connection("docs").state.status is Status.RUNNING
    # a new process: the saved trust for this exact config lets it start
    async with Hub(hooks=Policy(NonInteractivePrompter()).hooks()) as hub:
        await hub.apply(config_of(project_asker(project)))
        assert hub.connection("docs").state.status is Status.RUNNING
        # a changed environment value changes the digest: review again
        changed = project_asker(project, env={"API_KEY": "another-value"})
        await hub.apply(config_of(changed))
        assert hub.connection("docs").state.status is Status.AWAITING_TRUST
        # so do changed arguments
        moved = asker_spec(
            "docs",
            "--desc-file",
            "/dev/null",
            scope=Scope.PROJECT,
            project=project,
            env={"API_KEY": "secret-value-123"},
        )
        await hub.apply(config_of(moved))
        assert hub.connection("docs").state.status is Status.AWAITING_TRUST


async def test_reject_persists_in_the_trust_store_and_leaves_the_project_file_alone(
    person: ScriptedPerson, project: Path
) -> None:
    toml = project / ".portico" / "mcp.toml"
    toml.write_text(
        "# my project servers\n"
        "[mcp.docs]\n"
        f'command = ["{sys.executable}", "{ASKER}", "stdio"]  # keep this comment\n'
    )
    config = load(project)
    assert not config.errors, config.errors
    spec = config.server("docs")
    assert spec is not None and spec.source.scope is Scope.PROJECT
    person.add("review_trust", TrustChoice.REJECT)
    async with Hub(hooks=Policy(person).hooks()) as hub:
        await hub.apply(config)
        state = hub.connection("docs").state
        assert state.status is Status.REJECTED
        assert "rejected" in (state.error or "")
    before = toml.read_text()
    assert "enabled" not in before and "# keep this comment" in before
    # the next run remembers the decision (the person's own store), without asking
    async with Hub(hooks=Policy(person).hooks()) as hub:
        await hub.apply(load(project))
        assert hub.connection("docs").state.status is Status.REJECTED
    assert toml.read_text() == before


async def test_a_server_under_review_is_shown_as_awaiting_trust_until_answered(
    person: ScriptedPerson, project: Path
) -> None:
    """While the trust question was open the server published nothing (it stayed Stopped)
    and the Servers list hid it (issue 26, item 16). It is AwaitingTrust meanwhile, and
    not settled: a face waiting for the server to settle still waits for the answer."""
    answered = asyncio.Event()

    async def review_trust(request: object) -> TrustChoice:
        person.asked.append(("review_trust", request))
        await answered.wait()
        return TrustChoice.ONCE

    person.review_trust = review_trust  # type: ignore[method-assign]
    person.agrees_unsandboxed()
    bus = EventBus()
    shown: list[tuple[Status, str | None]] = []
    bus.subscribe(
        lambda e: (
            shown.append((e.state.status, e.state.error))
            if isinstance(e, StatusChanged) and e.state.name == "docs"
            else None
        )
    )
    async with Hub(bus, hooks=Policy(person).hooks()) as hub:
        applying = asyncio.create_task(hub.apply(config_of(project_asker(project))))
        await eventually(lambda: bool(person.requests("review_trust")), what="the question")
        conn = hub.connection("docs")
        assert conn.state.status is Status.AWAITING_TRUST
        assert shown[-1] == (Status.AWAITING_TRUST, "waiting for your review")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(conn.wait_settled(5), 0.3)
        answered.set()
        await applying
        assert conn.state.status is Status.RUNNING
