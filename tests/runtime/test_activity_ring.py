"""The activity ring and health figures over a real stdio server (the toolbox), and the
ring's bound and masking."""

from __future__ import annotations

import pytest
from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from portico.runtime.activity import ActivityLog, json_lines, masked
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from portico.runtime.health import percentile, process_memory

from .conftest import toolbox_spec

pytestmark = pytest.mark.slow  # real servers, processes or the app


async def test_a_stdio_server_s_calls_are_recorded_with_health(bus: EventBus) -> None:
    conn = Connection(toolbox_spec(), bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(60)
        assert state.status is Status.RUNNING, state.error
        for text in ("a", "b", "c"):
            await conn.call_tool("echo", {"text": text})
        calls = [e for e in conn.activity.snapshot() if e.method == "tools/call"]
        assert len(calls) == 3 and all(e.duration is not None for e in calls)
        assert all(e.status == "ok" and e.reply_size > 0 for e in calls)
        health = conn.activity.health.snapshot(
            memory_bytes=process_memory(conn.pid), connect_seconds=conn.connect_seconds
        )
        assert health.calls == 3 and health.errors == 0 and health.restarts == 0
        assert health.p50 is not None and health.p95 is not None and health.p50 <= health.p95
        assert len(health.recent) == 3
        assert health.memory_bytes is not None and health.memory_bytes > 1_000_000
        await conn.restart()
        await conn.wait_settled(60)
        assert conn.activity.health.snapshot().restarts == 1  # the ring survives restarts
    finally:
        await conn.stop()


def test_the_ring_is_bounded_and_replies_join_their_requests() -> None:
    log = ActivityLog("x", limit=3)
    for i in range(5):
        log.record("out", JSONRPCRequest(jsonrpc="2.0", id=i, method="tools/call", params={}))
    assert [e.id for e in log.snapshot()] == ["2", "3", "4"]
    log.record("in", JSONRPCResponse(jsonrpc="2.0", id=4, result={"content": []}))
    log.record("in", JSONRPCResponse(jsonrpc="2.0", id=0, result={}))  # its request is gone
    entries = log.snapshot()
    assert entries[0].id == "3" and entries[-1].kind == "response"
    assert [e.status for e in entries] == ["pending", "ok", "ok"]
    since = log.version
    log.record("in", JSONRPCNotification(jsonrpc="2.0", method="notifications/message"))
    assert [e.method for e in log.entries(since)] == ["notifications/message"]


def test_secrets_are_masked_in_what_is_shown_and_exported() -> None:
    log = ActivityLog("x")
    request = JSONRPCRequest(
        jsonrpc="2.0",
        id=1,
        method="tools/call",
        params={"name": "login", "arguments": {"api_key": "sk-live-123", "user": "ann"}},
    )
    log.record("out", request)
    log.attach_headers(
        request.model_dump_json().encode(), [("Authorization", "Bearer abc"), ("Accept", "x")]
    )
    shown = masked(log.snapshot()[0])
    assert shown["message"]["params"]["arguments"] == {"api_key": "********", "user": "ann"}
    assert shown["headers"] == {"Authorization": "********", "Accept": "x"}
    exported = json_lines(log.snapshot())
    assert "sk-live-123" not in exported and "Bearer abc" not in exported


def test_percentiles_are_nearest_rank() -> None:
    values = sorted(float(v) for v in range(1, 101))
    assert percentile(values, 0.5) == 50.0 and percentile(values, 0.95) == 95.0
    assert percentile([], 0.5) is None and percentile([7.0], 0.95) == 7.0


def _big_reply(i: int, kib: int = 200) -> JSONRPCResponse:
    text = "x" * (kib * 1024)
    return JSONRPCResponse(
        jsonrpc="2.0", id=i, result={"content": [{"type": "text", "text": text}]}
    )


def test_big_results_are_held_within_the_memory_budget() -> None:
    from portico.runtime.activity import KEPT_BUDGET

    log = ActivityLog("x")
    calls = KEPT_BUDGET // (200 * 1024) + 20
    for i in range(calls):
        log.record("out", JSONRPCRequest(jsonrpc="2.0", id=i, method="tools/call", params={}))
        log.record("in", _big_reply(i))
    entries = log.snapshot()
    assert len(entries) == calls
    held = [e for e in entries if e.reply is not None]
    assert held and held[-1] is entries[-1]  # the newest keep their JSON
    assert sum(e.reply_size for e in held) <= KEPT_BUDGET
    oldest = entries[0]
    exact = len(_big_reply(0).model_dump_json(by_alias=True, exclude_none=True))
    assert oldest.reply is None and oldest.reply_size == exact  # forgotten: its exact size
    assert masked(oldest)["reply"] == {"omitted_bytes": exact}


def test_a_message_over_the_limit_keeps_its_exact_size_only() -> None:
    log = ActivityLog("x")
    log.record("out", JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={}))
    log.record("in", _big_reply(1, kib=300))
    entry = log.snapshot()[0]
    expected = len(_big_reply(1, kib=300).model_dump_json(by_alias=True, exclude_none=True))
    assert entry.reply is None and entry.reply_size == expected
    assert entry.status == "ok"


def test_a_result_that_says_is_error_counts_as_an_error_in_health() -> None:
    log = ActivityLog("x")
    for i, failed in enumerate((False, True)):
        log.record("out", JSONRPCRequest(jsonrpc="2.0", id=i, method="tools/call", params={}))
        result = {"content": [], "isError": failed}
        log.record("in", JSONRPCResponse(jsonrpc="2.0", id=i, result=result))
    health = log.health.snapshot()
    assert health.calls == 2 and health.errors == 1


def test_a_reply_keeps_every_field_of_its_request() -> None:
    """The reply is joined without dataclasses.replace: each field of Exchange, present and
    future, must come through (headers an HTTP request carried, the first message)."""
    import dataclasses

    log = ActivityLog("s")
    request = log.record("out", JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/call"))
    assert request is not None
    log.attach_headers(b'{"id": 7}', [("X-Trace", "abc")])
    [asked] = log.snapshot()
    reply = log.record("in", JSONRPCResponse(jsonrpc="2.0", id=7, result={"isError": True}))
    assert reply is not None
    expected = dataclasses.replace(
        asked,
        reply_payload=reply.reply_payload,
        duration=reply.duration,
        error=None,
        failed_result=True,
        version=reply.version,
    )
    assert reply == expected
    assert reply.headers == {"X-Trace": "abc"} and reply.payload is asked.payload
    fields = {f.name for f in dataclasses.fields(reply)}
    assert {name for name in fields if getattr(reply, name) is None} == {"error"}
