"""Quitting with seven SDK stdio servers: Hub.close (the quit: 0.3 s after stdin closes,
then TERM) against stopping the same fleet by an edit (the whole 2 s grace: each server
leaves by itself). Printed: both wall times and their ratio.
Run: ``python -m pytest tests/benchmarks/test_bench_quit.py -s``.
"""

from __future__ import annotations

import statistics
import time

from portico.config.model import Config, Protocol
from portico.runtime.hub import Hub
from tests.helpers.specs import toolbox_spec

SERVERS = 7
ROUNDS = 3


def _fleet() -> Config:
    return Config(
        servers=tuple(
            toolbox_spec(f"s{i}", "--name", f"s{i}", protocol=Protocol.LEGACY)
            for i in range(SERVERS)
        )
    )


async def _edit_stop() -> float:
    async with Hub() as hub:
        await hub.apply(_fleet())
        started = time.monotonic()
        await hub.apply(Config(servers=()))
        return time.monotonic() - started


async def _quit() -> float:
    hub = Hub()
    await hub.apply(_fleet())
    started = time.monotonic()
    await hub.close()
    return time.monotonic() - started


async def test_quit_with_seven_sdk_servers() -> None:
    edits, quits = [], []
    for _ in range(ROUNDS):
        edits.append(await _edit_stop())
        quits.append(await _quit())
    edit, quit_ = statistics.median(edits), statistics.median(quits)
    print(
        f"\n{SERVERS} SDK stdio servers: stopped by an edit {edit:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in edits)}), quit {quit_:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in quits)}); quit / edit = {quit_ / edit:.2f}"
    )
    assert quit_ <= edit
