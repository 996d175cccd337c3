"""UI tests run their coroutines on the app's own hooked qasync loop (core tests keep asyncio's).

Inside async tests never use ``qtbot.waitUntil`` / ``waitSignal`` / ``qWait`` (they spin a
nested Qt loop and hang): use ``tests.ui.qt_helpers.until``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from portico.ui.facade import RuntimeThread
from portico.ui.loop import PorticoEventLoop, ensure_application
from tests.helpers.keyrings import memory_keyring

__all__ = ["memory_keyring"]  # a fixture: the in-memory keyring for tests that store secrets


def _hooked_loop() -> PorticoEventLoop:
    app = ensure_application()
    # Like the app: closing the last dialog must not quit the application (and the loop).
    app.setQuitOnLastWindowClosed(False)
    return PorticoEventLoop(app)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Collect the last test's cyclic garbage here, on the GUI thread. Each test gets a new
    qasync loop; the old one (its Qt timer objects included) sits in reference cycles, and
    a collection triggered on a runtime thread would destroy those QObjects there ("QObject::
    ~QObject: Timers cannot be stopped from another thread", then segfaults later on).

    The survivors are then frozen, as the app's own collector does (``ui/gc_guard.py``): the
    next test's collection walks only what was allocated since, a few ms, instead of every
    object the test process holds (80-300 ms a test, a third of the UI tests' time). A
    frozen object is never collected, on any thread, until something unfreezes it (the
    app's collector when it stops, and the next collection here is again on this thread)."""
    gc.collect()
    gc.freeze()


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Any]:
    return {"qasync": _hooked_loop}


@pytest.fixture
def runtime() -> Iterator[RuntimeThread]:
    thread = RuntimeThread()
    thread.start()
    yield thread
    thread.stop()
