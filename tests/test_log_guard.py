"""The autouse log guard in conftest.py: it sees Portico's warnings from any thread and
lets a test declare the ones it expects."""

from __future__ import annotations

import logging
import threading
from typing import Any

from tests.helpers.logs import AllowLogs


def test_an_undeclared_warning_is_caught_from_any_thread(_fail_on_unexpected_logs: Any) -> None:
    guard = _fail_on_unexpected_logs
    logging.getLogger("portico.runtime.demo").warning("disk %s is full", "/tmp")
    worker = threading.Thread(target=lambda: logging.getLogger("portico.x").error("boom"))
    worker.start()
    worker.join()
    logging.getLogger("portico.runtime.demo").info("info is not a problem")
    assert guard.unexpected == [
        "WARNING portico.runtime.demo: disk /tmp is full",
        "ERROR portico.x: boom",
    ]
    guard.unexpected.clear()  # seen and checked: the test itself passes


def test_a_library_warning_and_an_asyncio_error_are_caught_once(
    _fail_on_unexpected_logs: Any,
) -> None:
    guard = _fail_on_unexpected_logs
    logging.getLogger("somebody.else").warning("a library's warning")
    logging.getLogger().error("the root's own")
    logging.getLogger("asyncio").error("Task exception was never retrieved")
    assert guard.unexpected == [
        "WARNING somebody.else: a library's warning",
        "ERROR root: the root's own",
        "ERROR asyncio: Task exception was never retrieved",
    ]
    guard.unexpected.clear()


def test_asyncio_is_watched_even_when_it_does_not_propagate(
    _fail_on_unexpected_logs: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(logging.getLogger("asyncio"), "propagate", False)
    logging.getLogger("asyncio").error("Task was destroyed but it is pending!")
    assert _fail_on_unexpected_logs.unexpected == [
        "ERROR asyncio: Task was destroyed but it is pending!"
    ]
    _fail_on_unexpected_logs.unexpected.clear()


async def test_a_lost_task_exception_fails_the_test(_fail_on_unexpected_logs: Any) -> None:
    """The real thing: asyncio logs a task's exception nobody retrieved when it is freed."""
    import asyncio
    import gc

    async def fails() -> None:
        raise RuntimeError("lost")

    task = asyncio.get_running_loop().create_task(fails())
    await asyncio.sleep(0)
    del task
    gc.collect()
    assert any(
        line.startswith("ERROR asyncio: Task exception was never retrieved")
        and "RuntimeError: lost" in line
        for line in _fail_on_unexpected_logs.unexpected
    ), _fail_on_unexpected_logs.unexpected
    _fail_on_unexpected_logs.unexpected.clear()


def test_a_declared_warning_passes(allow_logs: AllowLogs, _fail_on_unexpected_logs: Any) -> None:
    allow_logs(r"^server '\w+' is slow")
    logging.getLogger("portico.runtime").warning("server 'a' is slow")
    logging.getLogger("portico.runtime").warning("server 'a' crashed")
    assert _fail_on_unexpected_logs.unexpected == ["WARNING portico.runtime: server 'a' crashed"]
    _fail_on_unexpected_logs.unexpected.clear()


def test_the_exception_is_named(_fail_on_unexpected_logs: Any) -> None:
    try:
        raise ValueError("bad value")
    except ValueError:
        logging.getLogger("portico.auth").exception("refresh failed")
    assert _fail_on_unexpected_logs.unexpected == [
        "ERROR portico.auth: refresh failed (ValueError: bad value)"
    ]
    _fail_on_unexpected_logs.unexpected.clear()
