"""MCP Apps views in the chat, in the real app with the scripted model and
tests/servers/viewer.py (trusted: no approval in the way):

- the first view shown after its tool result: the first one in the run (the web engine
  starts) and a second one (warm), the second being the figure the issue's ≤ 1.0 s is for;
- RSS with no view shown (the baseline, measured in the same run) and with three views
  live: Portico's own process and the web engine's processes apart (≤ +250 MiB);
- the scroll stall with 20 views in the transcript (three live at a time, the others
  placeholders that open and suspend while scrolling): the longest GUI gap (< 50 ms).

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest -s tests/benchmarks/test_bench_chat_views.py``
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import psutil
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.chat import events as ev
from portico.config.document import ConfigDocument
from portico.runtime.events import Status
from tests.benchmarks.test_bench_chat_transcript import Heartbeat
from tests.helpers.logs import AllowLogs
from tests.servers.model_server import text, tool_call, tool_calls
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

__all__ = ["model_server", "models"]

VIEWER = Path(__file__).parents[1] / "servers" / "viewer.py"
SMUGGLED = r"connectDomains entry 'https://x.example; script-src \*' is not a plain origin"
MIB = 1024 * 1024
VIEWS_IN_TRANSCRIPT = 20
SCROLL_STEP_PX = 120
SCROLL_TICK_MS = 16


def rss() -> tuple[float, float]:
    """(Portico's own RSS, the web engine processes' RSS), in MiB."""
    me = psutil.Process(os.getpid())
    engine = 0
    for child in me.children(recursive=True):
        try:
            if "QtWebEngine" in child.name():
                engine += child.memory_info().rss
        except psutil.Error:
            continue
    return me.memory_info().rss / MIB, engine / MIB


def pss() -> tuple[float, float, dict[str, int]]:
    """(Portico's own PSS, the web engine processes' PSS, in MiB, and their count).

    PSS is the figure that adds up: a page shared by n processes (the engine's zygote
    forks, the libraries) counts 1/n in each, where RSS counts it whole in every one."""
    me = psutil.Process(os.getpid())
    engine = 0
    kinds: dict[str, int] = {}
    for child in me.children(recursive=True):
        try:
            if "QtWebEngine" not in child.name():
                continue
            engine += child.memory_full_info().pss
            kinds["processes"] = kinds.get("processes", 0) + 1  # forked: all say zygote
        except psutil.Error:
            continue
    return me.memory_full_info().pss / MIB, engine / MIB, kinds


async def _turn(desktop: Any, qtbot: QtBot, words: str) -> None:
    chat = desktop.chat
    qtbot.keyClicks(chat.composer.input, words)
    qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
    await asyncio.sleep(0.05)
    await until(lambda: not chat.running, 120, "the turn to end")


async def _first_shown(desktop: Any, qtbot: QtBot, words: str) -> float:
    """Seconds from a show_weather result rendered to its view ready in the chat."""
    chat = desktop.chat
    before = len(chat.views.views)
    finished: list[float] = []

    def seen(event: object) -> None:
        if isinstance(event, ev.ToolCallFinished) and not finished:
            finished.append(time.perf_counter())

    chat.eventRendered.connect(seen)
    qtbot.keyClicks(chat.composer.input, words)
    qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
    try:  # a 2 ms poll is the clock here
        while not (len(chat.views.views) > before and chat.views.views[-1].pane.ready):  # noqa: ASYNC110
            await asyncio.sleep(0.002)
        shown = time.perf_counter()
    finally:
        chat.eventRendered.disconnect(seen)
    await until(lambda: not chat.running, 60, "the turn to end")
    return shown - finished[0]


def test_views_in_the_chat_open_fast_cost_little_and_scroll_smoothly(
    models, qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    from portico.ui.loop import GIL_SWITCH_INTERVAL, PorticoEventLoop, ensure_application

    allow_logs(SMUGGLED)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)  # as the app's main() does
    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        runner.run(_bench(models, qtbot, tmp_path))


async def _bench(models: Any, qtbot: QtBot, tmp_path: Path) -> None:
    path = write_config(models, everything=False)
    doc = ConfigDocument.open(path)
    viewer = [str(VIEWER), "--calls", str(tmp_path / "calls.jsonl")]
    doc.add_server("viewer", {"command": sys.executable, "args": viewer, "trust": "full"})
    doc.save()
    cities = [f"City{i}" for i in range(VIEWS_IN_TRANSCRIPT)]
    models.script(
        tool_call("viewer__show_weather", {"city": "Oslo"}),
        text("Oslo."),
        tool_call("viewer__show_weather", {"city": "Bergen"}),
        text("Bergen."),
        tool_call("viewer__show_weather", {"city": "Bodø"}),
        text("Bodø."),
        tool_calls(*(("viewer__show_weather", {"city": c}) for c in cities[3:])),
        text("Many cities."),
    )
    async with running_app(wait_for_server=False) as desktop:

        def running() -> bool:
            state = desktop.model.state("viewer")
            return state is not None and state.status is Status.RUNNING

        await until(running, 60, "the viewer server to run")
        chat = desktop.chat
        desktop.window.resize(900, 1400)
        await asyncio.sleep(0.5)
        own0, engine0 = rss()
        pown0, pengine0, _ = pss()

        cold = await _first_shown(desktop, qtbot, "Weather in Oslo?")
        warm = await _first_shown(desktop, qtbot, "Weather in Bergen?")
        third = await _first_shown(desktop, qtbot, "Weather in Bodø?")
        await until(lambda: len(chat.views.live) == 3, 30, "three live views")
        await asyncio.sleep(1.0)
        own3, engine3 = rss()
        pown3, pengine3, kinds = pss()
        print(
            f"\nfirst view shown after its result: {cold * 1000:.0f} ms with the web engine "
            f"starting, then {warm * 1000:.0f} ms and {third * 1000:.0f} ms warm "
            f"(ratio {cold / max(warm, 1e-4):.1f}x)"
        )
        print(
            f"RSS: no view {own0:.0f} MiB (web engine processes {engine0:.0f} MiB); "
            f"3 views {own3:.0f} MiB (+{own3 - own0:.0f}) and web engine processes "
            f"{engine3:.0f} MiB; total +{own3 + engine3 - own0 - engine0:.0f} MiB"
        )
        print(
            f"PSS: no view {pown0:.0f} MiB (web engine {pengine0:.0f}); 3 views {pown3:.0f} MiB "
            f"(+{pown3 - pown0:.0f}) and web engine {pengine3:.0f} MiB; total "
            f"+{pown3 + pengine3 - pown0 - pengine0:.0f} MiB; engine processes {kinds}"
        )

        await _turn(desktop, qtbot, "Weather everywhere")
        await until(
            lambda: len(chat.views.views) == VIEWS_IN_TRANSCRIPT, 60, "twenty views' places"
        )
        desktop.window.resize(900, 700)
        bar = chat.transcript.verticalScrollBar()
        await until(lambda: bar.maximum() > 0, 10, "a scrollable transcript")
        bar.setValue(0)
        await asyncio.sleep(0.5)
        beat = Heartbeat()
        beat.start()
        opened = 0
        while bar.value() < bar.maximum():
            bar.setValue(bar.value() + SCROLL_STEP_PX)
            await asyncio.sleep(SCROLL_TICK_MS / 1000)
            opened = max(opened, sum(v.live for v in chat.views.views))
        await asyncio.sleep(0.5)  # the last views open while the heartbeat runs
        stall = beat.stop()
        live_at_end = sum(v.live for v in chat.views.views)
        print(
            f"scroll through {VIEWS_IN_TRANSCRIPT} views (≤ {chat.views.limit} live, "
            f"{live_at_end} at the end): longest GUI gap {stall:.1f} ms, "
            f"GUI-thread CPU in one gap at most {beat.cpu_max():.1f} ms"
        )
        assert opened <= chat.views.limit and live_at_end <= chat.views.limit
