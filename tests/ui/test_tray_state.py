"""The tray's aggregate state for each combination of statuses (pure, no Qt)."""

from __future__ import annotations

import itertools

import pytest

from portico.runtime.events import ServerState, Status
from portico.ui.actions import ActionId, availability, useful
from portico.ui.tray_state import (
    Aggregate,
    RateLimiter,
    aggregate,
    endpoint_line,
    status_text,
    summary,
    tooltip,
)

GROUP = {
    Status.AWAITING_TRUST: Aggregate.ATTENTION,
    Status.NEEDS_AUTH: Aggregate.ATTENTION,
    Status.FAILED: Aggregate.FAILED,
    Status.COOLDOWN: Aggregate.FAILED,
    Status.CONNECTING: Aggregate.CONNECTING,
    Status.RUNNING: Aggregate.RUNNING,
    Status.LAZY: Aggregate.RUNNING,
    Status.DISABLED: Aggregate.EMPTY,
    Status.REJECTED: Aggregate.EMPTY,  # the person said no: nothing to do
    Status.STOPPED: Aggregate.EMPTY,
}
RANK = [
    Aggregate.EMPTY,
    Aggregate.RUNNING,
    Aggregate.CONNECTING,
    Aggregate.FAILED,
    Aggregate.ATTENTION,
]


def test_every_status_has_a_group() -> None:
    assert set(GROUP) == set(Status)
    for status, expected in GROUP.items():
        assert aggregate([status]) is expected, status


@pytest.mark.parametrize("size", [2, 3])
def test_every_combination_shows_the_most_urgent(size: int) -> None:
    for combo in itertools.product(list(Status), repeat=size):
        expected = max((GROUP[s] for s in combo), key=RANK.index)
        states = [ServerState(f"s{i}", s) for i, s in enumerate(combo)]
        assert aggregate(states) is expected, combo


def test_named_cases() -> None:
    assert aggregate([]) is Aggregate.EMPTY
    assert aggregate([Status.RUNNING, Status.RUNNING]) is Aggregate.RUNNING
    assert aggregate([Status.RUNNING, Status.CONNECTING]) is Aggregate.CONNECTING
    assert aggregate([Status.CONNECTING, Status.FAILED]) is Aggregate.FAILED
    assert aggregate([Status.FAILED, Status.NEEDS_AUTH]) is Aggregate.ATTENTION
    assert aggregate([Status.RUNNING, Status.DISABLED]) is Aggregate.RUNNING


def test_useful_actions() -> None:
    def of(status: Status) -> ActionId | None:
        return useful(ServerState("x", status))

    assert of(Status.NEEDS_AUTH) is ActionId.SIGN_IN
    assert of(Status.AWAITING_TRUST) is ActionId.REVIEW_TRUST
    assert of(Status.REJECTED) is ActionId.REVIEW_TRUST
    assert of(Status.FAILED) is ActionId.RETRY
    assert of(Status.COOLDOWN) is ActionId.RETRY
    assert of(Status.RUNNING) is None


def test_availability_follows_the_status_and_the_scope() -> None:
    rejected = availability(ServerState("x", Status.REJECTED), "project")
    # a rejected server comes back through its review, never by writing enabled = true
    assert rejected[ActionId.REVIEW_TRUST] and not rejected[ActionId.ENABLE]
    assert not rejected[ActionId.DISABLE] and not rejected[ActionId.RESTART]
    trusted = availability(ServerState("x", Status.RUNNING), "project")
    assert trusted[ActionId.REVIEW_TRUST] and trusted[ActionId.DISABLE]
    assert not availability(ServerState("x", Status.RUNNING), "global")[ActionId.REVIEW_TRUST]
    off = availability(ServerState("x", Status.DISABLED), "global")
    assert off[ActionId.ENABLE] and not off[ActionId.DISABLE] and not off[ActionId.RESTART]
    signin = availability(ServerState("x", Status.NEEDS_AUTH))
    assert signin[ActionId.SIGN_IN] and signin[ActionId.RETRY]


def test_status_text_counts_down() -> None:
    state = ServerState("x", Status.COOLDOWN, retry_at=1000.0)
    assert status_text(state, now=988.2) == "Retrying in 12 s"
    assert status_text(state, now=1005.0) == "Retrying in 0 s"
    failed = ServerState("x", Status.COOLDOWN, error="exited (code 3)", retry_at=1000.0)
    assert status_text(failed, now=971.0) == "Failed, retrying in 29 s"
    assert status_text(ServerState("x", Status.REJECTED)) == "Rejected at trust review"
    assert status_text(ServerState("x", Status.NEEDS_AUTH)) == "Needs sign-in"


def test_summary_line() -> None:
    states = [
        ServerState("a", Status.RUNNING, tool_count=3),
        ServerState("b", Status.RUNNING, tool_count=2),
        ServerState("c", Status.NEEDS_AUTH),
        ServerState("d", Status.FAILED),
        ServerState("e", Status.DISABLED),
    ]
    assert summary(states) == "5 servers: 2 running, 1 needs you, 1 failed, 1 disabled; 5 tools"
    two = [*states, ServerState("f", Status.AWAITING_TRUST)]
    assert summary(two) == "6 servers: 2 running, 2 need you, 1 failed, 1 disabled; 5 tools"
    one = [ServerState("a", Status.RUNNING, tool_count=1)]
    assert summary(one) == "1 server: 1 running; 1 tool"
    assert summary([]) == "Portico: no servers configured"


def test_the_tooltip_says_whether_the_endpoint_is_on_and_its_url() -> None:
    url = "http://127.0.0.1:41234/mcp"
    assert endpoint_line(url) == f"Endpoint for other MCP clients: on at {url}"
    assert endpoint_line(None) == "Endpoint for other MCP clients: off"
    one = [ServerState("a", Status.RUNNING, tool_count=1)]
    assert tooltip(one, None, url) == f"1 server: 1 running; 1 tool\n{endpoint_line(url)}"
    # the hub's line only until the first state arrives
    assert tooltip([], "MCP: starting", None) == f"MCP: starting\n{endpoint_line(None)}"
    assert tooltip(one, "MCP: starting", None).startswith("1 server: ")


def test_rate_limiter() -> None:
    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])
    assert limiter.allow("a:failed")
    assert not limiter.allow("a:failed")
    assert limiter.allow("b:failed")
    now[0] = 61
    assert limiter.allow("a:failed")
