"""The Log tab against a real failing server: every line has its time, each failed
attempt's stderr shows once (not again inside the failure note, not accumulating per
attempt, nor in the Overview's Last error); the server's log notifications show with their
level and can be filtered by level."""

from __future__ import annotations

import re

from portico.runtime.events import LogLine, Status
from tests.ui.pages_helpers import command, running_app, select, status_of, write_global
from tests.ui.qt_helpers import until

STAMP = re.compile(r"^\d\d:\d\d:\d\d\.\d{3}  ")


async def test_log_lines_have_times_and_each_attempt_s_stderr_once() -> None:
    write_global(f"[mcp.broken]\ncommand = {command('tiny.py', '--exit', '3')}\n")
    async with running_app() as desktop:
        attempts = 0

        def counted(state: object) -> None:
            nonlocal attempts
            if getattr(state, "name", "") == "broken" and state.status is Status.FAILED:  # type: ignore[attr-defined]
                attempts += 1

        desktop.bridge.statusChanged.connect(counted)
        await until(lambda: status_of(desktop, "broken") is Status.COOLDOWN, 30, "a failure")
        for _ in range(2):  # two more attempts
            seen = attempts
            desktop.server_action("retry", "broken")
            await until(lambda s=seen: attempts > s, 30, "another failed attempt")
        select(desktop, "broken")
        pages = desktop.pages
        log = pages.log
        desktop.window.page.setCurrentWidget(log.parentWidget())
        await until(lambda: log.view.toPlainText().count("failed:") >= 3, 30, "three failures")
        lines = log.view.toPlainText().splitlines()
        assert all(STAMP.match(line) for line in lines if line.strip()), lines
        said = [line for line in lines if "exiting with 3 as asked" in line]
        failures = [line for line in lines if "[portico] failed:" in line]
        assert len(said) == len(failures) >= 3  # once per attempt, never repeated
        assert all("(its stderr is above)" in line for line in failures), failures
        # the Overview's Last error names this attempt's stderr once
        error = desktop.model.state("broken").error or ""  # type: ignore[union-attr]
        assert error.count("exiting with 3 as asked") == 1, error

        # server log notifications: level and time, and a level filter
        async def notify() -> None:
            bus = desktop.session.bus
            bus.publish(LogLine("broken", "cache warmed", stream="mcp", level="debug"))
            bus.publish(LogLine("broken", "disk almost full", stream="mcp", level="warning"))

        await desktop.runtime.submit(notify())
        await until(lambda: "disk almost full" in log.view.toPlainText(), 10, "notifications")
        text = log.view.toPlainText()
        assert re.search(r"\d\d:\d\d:\d\d\.\d{3}  \[warning\] disk almost full", text)
        assert "[debug] cache warmed" in text
        log.set_level("warning")
        text = log.view.toPlainText()
        assert "disk almost full" in text and "cache warmed" not in text
        assert "exiting with 3 as asked" in text  # stderr is not a notification: it stays
        log.set_level("")
        assert "cache warmed" in log.view.toPlainText()
