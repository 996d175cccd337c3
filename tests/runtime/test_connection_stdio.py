"""Connection over stdio against the toolbox server (real subprocesses)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
from mcp_types import CallToolResult

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.errors import CallTimeout, RuntimeFailure, ServerExited
from portico.runtime.events import EventBus, LogLine, Status, ToolsChanged
from tests.helpers.calls import calling

from .conftest import Recorder, eventually, failing_spec, toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_stdio_connects_lists_and_calls(bus: EventBus, events: Recorder) -> None:
    conn = Connection(toolbox_spec(protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    state = await conn.wait_settled(30)
    try:
        assert state.status is Status.RUNNING, state.error
        assert {t.name for t in conn.tools} >= {"echo", "sleep", "crash", "hang", "flip"}
        assert state.tool_count == len(conn.tools)
        assert conn.protocol_version == "2025-11-25"
        assert conn.server_info.name == "toolbox"
        assert [p.name for p in conn.prompts] == ["greet"]
        assert [str(r.uri) for r in conn.resources] == ["toolbox://readme"]
        result = await conn.call_tool("echo", {"text": "hi"})
        assert isinstance(result, CallToolResult)
        assert result.content[0].text == "echo: hi"
        prompt = await conn.get_prompt("greet", {"name": "Ada"})
        assert "Hello, Ada!" in prompt.messages[0].content.text
        read = await conn.read_resource("toolbox://readme")
        assert read.contents[0].text == "toolbox readme"
        assert events.statuses()[:2] == [Status.CONNECTING, Status.RUNNING]
        assert any(isinstance(e, ToolsChanged) for e in events.events)
    finally:
        await conn.stop()
    assert conn.state.status is Status.STOPPED
    assert conn.pid is None


async def test_auto_protocol_negotiates_2026(bus: EventBus) -> None:
    conn = Connection(toolbox_spec(protocol=Protocol.AUTO), bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        assert conn.protocol_version == "2026-07-28"
        result = await conn.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0].text == "5"
    finally:
        await conn.stop()


async def test_kill_9_mid_call_reports_exit_code_and_stderr(
    bus: EventBus, events: Recorder
) -> None:
    spec = toolbox_spec("victim", "--stderr-lines", "3", protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus, cooldown_base=60.0)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        pid = conn.pid
        assert pid is not None
        import asyncio

        call = asyncio.create_task(conn.call_tool("hang", {}))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ServerExited) as caught:
            await call
        message = str(caught.value)
        assert message.startswith("server was killed by signal 9 (SIGKILL); last stderr lines:")
        assert "toolbox stderr line 2" in message
        assert "[portico]" not in message  # only the server's own stderr lines
        await eventually(lambda: conn.state.status is Status.COOLDOWN, what="cooldown")
        statuses = events.statuses()
        assert statuses[-2:] == [Status.FAILED, Status.COOLDOWN]
        assert "killed by signal 9 (SIGKILL)" in (conn.state.error or "")
        assert conn.state.retry_at is not None
        # calls while cooling down fail at once with the reason and the next try
        with pytest.raises(RuntimeFailure, match="Cooldown"):
            await conn.call_tool("echo", {"text": "x"})
    finally:
        await conn.stop()


async def test_10_mib_result_over_stdio(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("bigstdio", protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        result = await conn.call_tool("big", {"mib": 10})
        assert len(result.content[0].text) == 10 * 1024 * 1024
    finally:
        await conn.stop()


async def test_non_json_stdout_lines_are_shown_and_skipped(bus: EventBus) -> None:
    spec = toolbox_spec("banner", "--stdout-banner", "Welcome to my server!")
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        assert (await conn.call_tool("echo", {"text": "ok"})).content[0].text == "echo: ok"
        assert any("not JSON-RPC: Welcome to my server!" in line for line in conn.log.lines)
    finally:
        await conn.stop()


async def test_crash_tool_exit_code(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("crashy", protocol=Protocol.LEGACY), bus=bus, cooldown_base=60)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        with pytest.raises(ServerExited, match=r"server exited \(code 7\)") as caught:
            await conn.call_tool("crash", {"code": 7, "message": "boom on purpose"})
        assert "boom on purpose" in str(caught.value)
    finally:
        await conn.stop()


async def test_exit_at_start_fails_then_cooldown_and_retry_now(
    bus: EventBus, events: Recorder
) -> None:
    conn = Connection(failing_spec("dies", 4), bus=bus, cooldown_base=60.0)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.COOLDOWN
        assert "server exited (code 4)" in (state.error or "")
        assert "failing at start" in (state.error or "")
        first_retry = state.retry_at
        assert first_retry is not None
        await conn.retry_now()
        await eventually(lambda: events.statuses().count(Status.COOLDOWN) >= 2, what="2nd")
        assert events.statuses().count(Status.FAILED) == 2
    finally:
        await conn.stop()


async def test_cooldown_doubles_and_caps(bus: EventBus) -> None:
    import time

    seen: list[float] = []

    def on_event(event: object) -> None:
        state = getattr(event, "state", None)
        if state is not None and state.status is Status.COOLDOWN:
            seen.append(state.retry_at - time.time())

    bus.subscribe(on_event)
    conn = Connection(failing_spec("dies2", 1), bus=bus, cooldown_base=0.2, cooldown_max=0.8)
    await conn.start()
    try:
        await eventually(lambda: len(seen) >= 4, within=40, what="4 cooldowns")
    finally:
        await conn.stop()
    # 0.2, 0.4, 0.8, 0.8 (capped); allow for a loaded machine's clock noise
    assert seen[0] == pytest.approx(0.2, abs=0.1)
    assert seen[1] == pytest.approx(0.4, abs=0.1)
    assert seen[2] == pytest.approx(0.8, abs=0.1)
    assert seen[3] == pytest.approx(0.8, abs=0.1)


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_hang_past_timeout_and_cancel(bus: EventBus, protocol: Protocol) -> None:
    conn = Connection(toolbox_spec("hangs", protocol=protocol, timeout=0.5), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        with pytest.raises(CallTimeout, match=r"within 0\.5 s"):
            await conn.call_tool("hang", {})
        # the server was told (notifications/cancelled) and survives
        await eventually(lambda: "hang cancelled" in conn.log.lines, what="server-side cancel")
        result = await conn.call_tool("echo", {"text": "still here"})
        assert result.content[0].text == "echo: still here"
        assert conn.state.status is Status.RUNNING

        # cancelling the caller's task cancels the call, and the server hears of it
        conn.log.lines.clear()
        call = asyncio.create_task(conn.call_tool("hang", {}, timeout=30))
        await asyncio.sleep(0.3)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert conn.calls.inflight == 0
        await eventually(lambda: "hang cancelled" in conn.log.lines, what="server-side cancel")
        result = await conn.call_tool("echo", {"text": "after cancel"})
        assert result.content[0].text == "echo: after cancel"
    finally:
        await conn.stop()


async def test_progress_extends_deadline(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("slow", protocol=Protocol.LEGACY, timeout=0.8), bus=bus)
    await conn.start()
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        # 2.4 s of work, a progress step every 0.3 s: well past the 0.8 s timeout
        result = await conn.call_tool(
            "sleep", {"seconds": 2.4, "steps": 8}, context=calling(progress)
        )
        assert result.content[0].text == "slept 2.4"
        assert len(seen) == 8
        assert seen[-1] == (8, 8, "step 8")
        # without progress the same work times out
        with pytest.raises(CallTimeout):
            await conn.call_tool("sleep", {"seconds": 2.4})
        # progress every 0.1 s for 30 s: extended each time, but never past 10 x 0.2 s
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(CallTimeout):
            await conn.call_tool("sleep", {"seconds": 30, "steps": 300}, timeout=0.2)
        assert loop.time() - began < 15
    finally:
        await conn.stop()


async def test_connect_timeout(bus: EventBus) -> None:
    spec = toolbox_spec("slowstart", "--start-delay", "10", connect_timeout=0.5)
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert "connect_timeout = 0.5 s" in (state.error or "")
    finally:
        await conn.stop()


async def test_stderr_goes_to_ring_and_file_not_our_stderr(
    bus: EventBus, events: Recorder, capfd: pytest.CaptureFixture[str]
) -> None:
    conn = Connection(
        toolbox_spec("noisy", "--stderr-lines", "2", protocol=Protocol.LEGACY), bus=bus
    )
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        await conn.call_tool("stderr", {"text": "from tool", "lines": 3})
        await eventually(lambda: "from tool 2" in conn.log.lines, what="stderr line")
        assert "toolbox stderr line 1" in conn.log.lines
        lines = [e.text for e in events.events if isinstance(e, LogLine) and e.stream == "stderr"]
        assert "from tool 0" in lines
        text = conn.log.file.read_text()
        assert "from tool 2" in text and "toolbox stderr line 0" in text
    finally:
        await conn.stop()
    captured = capfd.readouterr()
    assert "from tool" not in captured.err
    assert "toolbox stderr line" not in captured.err


async def test_missing_command_names_the_path(bus: EventBus) -> None:
    from .conftest import make_spec

    spec = make_spec("ghost", command="definitely-not-a-real-mcp-server-xyz")
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert "definitely-not-a-real-mcp-server-xyz" in (state.error or "")
        assert "not found on PATH=" in (state.error or "")
        assert os.environ["PATH"].split(os.pathsep)[0] in (state.error or "")
    finally:
        await conn.stop()


async def test_env_is_safe_baseline_plus_configured(
    bus: EventBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTICO_TEST_SECRET_LEAK", "leaked")
    monkeypatch.setenv("PORTICO_TEST_REF", "from-env")
    script = (
        "import os,sys; sys.stderr.write('ENV ' + ','.join(sorted(os.environ)) + '\\n');"
        "sys.stderr.write('REF ' + os.environ.get('GREETING','') + '\\n'); sys.exit(0)"
    )
    from .conftest import make_spec

    spec = make_spec(
        "envcheck",
        command=sys.executable,
        args=("-c", script),
        env={"GREETING": "hello ${env:PORTICO_TEST_REF}"},
    )
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        await conn.wait_settled(20)
        env_line = next(line for line in conn.log.lines if line.startswith("ENV "))
        names = set(env_line[4:].split(","))
        assert "PORTICO_TEST_SECRET_LEAK" not in names
        assert "GREETING" in names and "PATH" in names
        assert "REF hello from-env" in conn.log.lines
    finally:
        await conn.stop()


async def test_disabled_server_never_starts(bus: EventBus, events: Recorder) -> None:
    conn = Connection(toolbox_spec("off", enabled=False), bus=bus)
    await conn.start()
    assert conn.state.status is Status.DISABLED
    assert (await conn.wait_settled(1)).status is Status.DISABLED
    with pytest.raises(RuntimeFailure, match="disabled"):
        await conn.call_tool("echo", {"text": "x"})
    assert events.statuses() == [Status.DISABLED]
