"""The tray notifies when a real server goes Failed, at most once per interval per server:
a real hub on the runtime thread, its EventBus through the bridge, the model and the Tray
wired as in the app."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from portico.runtime.events import EventBus, Status
from portico.runtime.hub import Hub
from portico.ui.bridge import EventBridge, attach_on_runtime
from portico.ui.facade import RuntimeThread
from portico.ui.models.servers import ServerListModel
from portico.ui.tray import Tray
from tests.helpers.specs import config_of, spec_for
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

TINY = Path(__file__).resolve().parents[1] / "servers" / "tiny.py"
INTERVAL = 1.5  # seconds between two notifications about the same server


async def test_failure_notification_through_the_real_tray(runtime: RuntimeThread) -> None:
    bus = EventBus()
    bridge = EventBridge()
    model = ServerListModel()
    model.connect_bridge(bridge)
    tray = Tray(notify_interval=INTERVAL)
    model.statesChanged.connect(lambda: tray.update_states(model.states()))
    shown: list[tuple[str, str, bool, float]] = []
    tray.notified.connect(lambda t, x, c: shown.append((t, x, c, time.monotonic())))
    failures: list[float] = []
    bridge.statusChanged.connect(
        lambda s: s.status is Status.FAILED and failures.append(time.monotonic())
    )
    await runtime.submit(attach_on_runtime(bridge, bus))
    spec = spec_for("broken", command=sys.executable, args=(str(TINY), "--exit", "3"))
    hub = Hub(bus)

    await runtime.submit(hub.apply(config_of(spec)))
    await until(lambda: shown, 30, "the failure notification")
    title, text, critical, _ = shown[0]
    assert title == "broken failed" and critical
    assert "3" in text  # the exit code is in the error the tray shows

    # A second failure right away is not notified again (rate-limited)...
    await runtime.submit(hub.retry("broken"))
    await until(lambda: len(failures) >= 2, 30, "the second failure")
    await asyncio.sleep(0.2)
    if failures[1] - failures[0] < INTERVAL:
        assert len(shown) == 1, shown
    # ...but one after the interval is.
    await asyncio.sleep(max(0.0, failures[0] + INTERVAL - time.monotonic()) + 0.1)
    await runtime.submit(hub.retry("broken"))
    await until(lambda: len(shown) == 2, 30, "the notification after the interval")
    assert shown[1][0] == "broken failed"
    assert len(failures) >= 3
    await runtime.submit(hub.close())
