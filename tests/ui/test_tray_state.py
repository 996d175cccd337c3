"""The tray's aggregate state for each combination of statuses (pure, no Qt)."""

from __future__ import annotations

import itertools

import pytest

from portico.runtime.events import ServerState, Status
from portico.ui.tray_state import (
    Action,
    Aggregate,
    RateLimiter,
    aggregate,
    status_text,
    summary,
    useful_action,
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
    assert useful_action(Status.NEEDS_AUTH) is Action.AUTHORIZE
    assert useful_action(Status.AWAITING_TRUST) is Action.REVIEW
    assert useful_action(Status.FAILED) is Action.RETRY
    assert useful_action(Status.COOLDOWN) is Action.RETRY
    assert useful_action(Status.RUNNING) is None


def test_status_text_counts_down() -> None:
    state = ServerState("x", Status.COOLDOWN, retry_at=1000.0)
    assert status_text(state, now=988.2) == "Retrying in 12 s"
    assert status_text(state, now=1005.0) == "Retrying in 0 s"
    assert status_text(ServerState("x", Status.NEEDS_AUTH)) == "Needs sign-in"


def test_summary_line() -> None:
    states = [
        ServerState("a", Status.RUNNING, tool_count=3),
        ServerState("b", Status.RUNNING, tool_count=2),
        ServerState("c", Status.NEEDS_AUTH),
        ServerState("d", Status.FAILED),
        ServerState("e", Status.DISABLED),
    ]
    assert summary(states) == "5 servers: 2 running, 1 need you, 1 failed, 1 disabled; 5 tools"
    assert summary([]) == "Portico: no servers configured"


def test_rate_limiter() -> None:
    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])
    assert limiter.allow("a:failed")
    assert not limiter.allow("a:failed")
    assert limiter.allow("b:failed")
    now[0] = 61
    assert limiter.allow("a:failed")
