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
    logging.getLogger("somebody.else").warning("not ours")
    assert guard.unexpected == [
        "WARNING portico.runtime.demo: disk /tmp is full",
        "ERROR portico.x: boom",
    ]
    guard.unexpected.clear()  # seen and checked: the test itself passes


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
