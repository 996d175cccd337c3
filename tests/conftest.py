"""Shared fixtures: every test gets its own PORTICO_HOME and a project folder, and fails
if Portico logged a warning or an error that the test did not declare (``allow_logs``)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers.logs import AllowLogs
from tests.helpers.warm import session_fork_server

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if hasattr(os, "geteuid") and os.geteuid() == 0:
    # Chromium (QtWebEngine: MCP Apps views) runs as root only without its own sandbox;
    # the suite runs as root in CI containers. A person's app never sets this.
    os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--no-sandbox")

from PySide6.QtCore import QCoreApplication, Qt

# QtWebEngine needs this before any QApplication exists (pytest-qt's or the app's)
QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)

# CI runs the property tests on a fixed seed sequence so a red build always reproduces;
# local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO / "tests" / "peers" / "node_modules"


_WARM = pytest.StashKey[contextlib.ExitStack]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's fork server (tests/helpers/warm.py), started by the controlling process
    only: an xdist worker finds it named in the environment it inherited."""
    if hasattr(config, "workerinput"):
        return
    stack = contextlib.ExitStack()
    stack.enter_context(session_fork_server())
    config.stash[_WARM] = stack


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_WARM, None)
    if stack is not None:
        stack.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The conformance suite is marked by where it lives: ``conformance`` and ``slow``.

    It also runs first: its one test is the longest of the run (two to three minutes of
    scenarios), and on two workers a long test that starts late is the run's tail. Every
    worker sorts the same way (xdist requires the same collection); the order of the
    other tests, module by module, is kept."""
    first: list[pytest.Item] = []
    for item in items:
        where = Path(str(item.path)).relative_to(REPO).as_posix()
        if where.startswith("tests/conformance/") or where == "tests/auth/test_conformance.py":
            item.add_marker(pytest.mark.conformance)
            item.add_marker(pytest.mark.slow)
            first.append(item)
    chosen = set(first)
    items[:] = first + [item for item in items if item not in chosen]


@pytest.fixture(autouse=True)
def portico_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "portico-home"
    home.mkdir()
    monkeypatch.setenv("PORTICO_HOME", str(home))
    yield home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".portico").mkdir(parents=True)
    return root


class _LogGuard(logging.Handler):
    """Collects WARNING+ records from every thread: Portico's, asyncio's ("Task exception
    was never retrieved", a slow callback), the SDK's and any other library's."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.allowed: list[re.Pattern[str]] = list(_ALWAYS_ALLOWED)
        self.unexpected: list[str] = []
        self._records_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        # On asyncio's logger and on the root: a record that propagates is seen once.
        if getattr(record, "_log_guard_seen", False):
            return
        record._log_guard_seen = True
        message = record.getMessage()
        if any(pattern.search(message) for pattern in self.allowed):
            return
        line = f"{record.levelname} {record.name}: {message}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line += f" ({type(exc).__name__}: {exc})"
        with self._records_lock:
            self.unexpected.append(line)


# The root sees every logger that propagates; asyncio's is watched itself as well, so a
# library that stops its propagation cannot hide a task's lost exception.
_WATCHED = (logging.getLogger(), logging.getLogger("asyncio"))
# The test machine has no keyring, and the app says so once per process: whichever test
# touches a secret first would carry the warning, so it is expected everywhere.
_ALWAYS_ALLOWED = (re.compile(r"^No secure keyring is available"),)


@pytest.fixture(autouse=True)
def _fail_on_unexpected_logs() -> Iterator[_LogGuard]:
    """Like qutebrowser's: a warning nobody expected is a bug in the code or in the test.

    A test that expects one declares it: ``allow_logs(r"regex on the message")``.
    """
    guard = _LogGuard()
    for logger in _WATCHED:
        logger.addHandler(guard)
    try:
        yield guard
    finally:
        for logger in _WATCHED:
            logger.removeHandler(guard)
    if guard.unexpected:
        listed = "\n  ".join(guard.unexpected)
        pytest.fail(
            "Warnings/errors were logged that this test did not declare (declare expected "
            f"ones with allow_logs(r'...')):\n  {listed}",
            pytrace=False,
        )


@pytest.fixture
def allow_logs(_fail_on_unexpected_logs: _LogGuard) -> AllowLogs:
    """``allow_logs(r"regex")``: records whose message matches are expected in this test."""

    def allow(pattern: str) -> None:
        _fail_on_unexpected_logs.allowed.append(re.compile(pattern))

    return allow
