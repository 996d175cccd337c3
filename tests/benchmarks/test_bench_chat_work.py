"""The tool round trip's work, counted: Python bytecodes the event loop's thread runs per
call, bare ``Client.call_tool`` vs ``ToolGuard.call`` vs the agent loop's tool step
(``run_calls``) vs a whole direct-mode turn (``Chat`` ``/call``): the paths of
``test_bench_chat.py``'s round trip, each to its own toolbox server over stdio.

A count does not move with the machine's speed (this VM's drifts 2x within minutes, which
the wall-time ratio has to average out), so it shows what a change to our layers did on
any run; the largest differences by module say where our part of a call goes. It leaves
out work done in C (pydantic, json, sqlite) and the server's own work, so it is a guide,
not the goal's figure.

Run: ``python -m pytest tests/benchmarks/test_bench_chat_work.py -s``
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

from portico.chat.events import Event, ToolCallFinished
from portico.chat.tools import PlannedCall, run_calls
from portico.config.model import TrustLevel
from tests.chat.conftest import chat_setup
from tests.helpers.servers import TOOLBOX
from tests.helpers.specs import toolbox_spec

CALLS = 60


def noop(event: Event) -> None:
    pass


def _where(path: str) -> str:
    if "/portico/" in path:
        return "portico." + path.rsplit("/portico/", 1)[1].removesuffix(".py").replace("/", ".")
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0]
    return path.rsplit("/", 1)[-1].removesuffix(".py")


class _Counter:
    """Bytecodes executed, by module, while it is on (this thread only)."""

    def __init__(self) -> None:
        self.by_module: Counter[str] = Counter()

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return self._local

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            self.by_module[_where(frame.f_code.co_filename)] += 1
        return self._local

    async def count(
        self, op: Callable[[], Awaitable[None]], times: int, *, settle: bool
    ) -> Counter[str]:
        self.by_module = Counter()
        sys.settrace(self._global)
        try:
            for _ in range(times):
                await op()
            if settle:  # our batched bookkeeping (the tap, the store) is counted too
                await asyncio.sleep(0.15)
        finally:
            sys.settrace(None)
        return self.by_module


async def bench_work(calls: int = CALLS) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(TOOLBOX), "stdio"])
    async with Client(params) as client, chat_setup(toolbox_spec("tb", trust=TrustLevel.FULL)) as s:
        chat = await s.host.new(title="bench")

        async def bare() -> None:
            await client.call_tool("echo", {"text": "hello"})

        async def guard() -> None:
            await s.host.guard.call(chat.context, "tb__echo", {"text": "hello"})

        ids = iter(range(10**9))

        async def loop() -> None:
            call = PlannedCall(f"call{next(ids)}", "tb__echo", {"text": "hello"})
            [report] = await run_calls(s.host.guard, chat.context, chat.active_tools, [call], noop)
            assert report.outcome == "ok", report

        async def ours() -> None:
            async for event in chat.send('/call tb__echo {"text": "hello"}'):
                if isinstance(event, ToolCallFinished):
                    assert event.ok, event

        counter = _Counter()
        counts: dict[str, Counter[str]] = {}
        for name, op in (("bare", bare), ("guard", guard), ("loop", loop), ("chat", ours)):
            for _ in range(10):
                await op()
            await s.host.store.flush()
            counts[name] = await counter.count(op, calls, settle=name != "bare")
    per = {name: sum(c.values()) / calls for name, c in counts.items()}
    figures = {name: per[name] for name in per}
    for name in ("guard", "loop", "chat"):
        figures[f"{name}_ratio"] = per[name] / per["bare"]
    extra = counts["chat"].copy()
    extra.subtract(counts["bare"])
    top = ", ".join(f"{m} {n / calls:+.0f}" for m, n in extra.most_common(8))
    print(
        f"\nPython bytecodes on the loop's thread per tool call ({calls} calls each): "
        f"bare {per['bare']:.0f}, through the guard {per['guard']:.0f} "
        f"({figures['guard_ratio']:.2f}x), the loop's tool step {per['loop']:.0f} "
        f"({figures['loop_ratio']:.2f}x), a Chat /call turn {per['chat']:.0f} "
        f"({figures['chat_ratio']:.2f}x)\n  most of the turn's difference: {top}"
    )
    return figures


def test_bench_chat_work() -> None:
    figures = asyncio.run(bench_work())
    assert figures["guard_ratio"] < figures["loop_ratio"] < figures["chat_ratio"] < 3.0


if __name__ == "__main__":
    asyncio.run(bench_work())
