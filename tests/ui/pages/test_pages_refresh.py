"""The server page refreshes on real changes of the selected server only (house rule 3):
another server's Cooldown countdown, which ticks every second, must not refetch anything."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from portico.runtime.events import Status
from portico.ui.actions import ActionId
from tests.ui.pages_helpers import command, running_app, select, status_of, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

CONFIG = f"""[mcp.tiny]
command = {command("tiny.py", "--tools", "2")}

[mcp.broken]
command = {command("tiny.py", "--exit", "3")}
"""


def settled(pages: Any) -> bool:
    """No refresh is due (the selection's 60 ms debounce, the activity's coalescing) and
    none is still fetching: whatever a change asked for has been fetched and counted."""
    due = pages._debounce.isActive() or pages._activity_due.isActive()
    return not due and pages.ops.running == 0


def cooldown_left(desktop: Any, name: str) -> float:
    state = desktop.model.state(name)
    if state is None or state.status is not Status.COOLDOWN or state.retry_at is None:
        return 0.0
    return float(state.retry_at - time.time())


async def test_a_cooldown_countdown_elsewhere_causes_no_page_refresh() -> None:
    write_global(CONFIG)
    async with running_app("tiny") as desktop:
        await until(lambda: status_of(desktop, "broken") is Status.COOLDOWN, 30, "broken cools")
        pages = desktop.pages
        calls: Counter[str] = Counter()
        service = desktop.session.pages  # the runtime side the page fetches from
        for method in ("details", "tools"):
            real = getattr(service, method)

            async def counting(*args: Any, _real: Any = real, _name: str = method) -> Any:
                calls[_name] += 1
                return await _real(*args)

            setattr(service, method, counting)
        select(desktop, "tiny")
        await until(lambda: len(pages.tools.tools) >= 3, 30, "tiny's tools on the page")
        await until(lambda: settled(pages), 10, "the selection's refresh to finish")
        ticks: list[str] = []
        desktop.model.countdownTicked.connect(ticks.append)
        calls.clear()

        await until(lambda: ticks.count("broken") >= 3, 10, "three countdown ticks")
        # A tick that asked for a refresh started the debounce: it is fetched (and
        # counted) before the page is settled again.
        await until(lambda: settled(pages), 10, "any refresh to finish")
        print(f"\ncountdown ticks: {len(ticks)}, page service calls: {dict(calls)}")
        assert desktop.model.counting_down
        assert calls["details"] == 0 and calls["tools"] == 0, calls

        # The selected server's own countdown redraws its status line without fetching.
        select(desktop, "broken")
        await until(lambda: calls["details"] >= 1, 10, "the selection's refresh")
        await until(lambda: pages.overview.details is not None, 10, "broken's details")
        # broken's own retry is a real change (its page refreshes, rightly): the window
        # below lies inside one cooldown (2, 4, 8 s...), which it checks at its end.
        # Its failed attempt's traffic is announced a little after its status (the
        # activity log coalesces): a refresh for that is a real one, so a window in which
        # broken's activity moved is tried again; in a quiet one nothing may be fetched.
        activity: list[str] = []
        desktop.bridge.activityChanged.connect(activity.append)
        for _attempt in range(4):
            await until(lambda: cooldown_left(desktop, "broken") >= 3, 60, "a long cooldown")
            await until(lambda: settled(pages), 10, "the selection's refresh to finish")
            retry_at = desktop.model.state("broken").retry_at  # type: ignore[union-attr]
            calls.clear()
            activity.clear()
            first = pages.overview.table.text()
            assert "Failed, retrying in" in first
            await until(lambda f=first: pages.overview.table.text() != f, 5, "the countdown")
            await until(lambda: settled(pages), 10, "any refresh to finish")
            assert desktop.model.state("broken").retry_at == retry_at  # type: ignore[union-attr]
            if "broken" not in activity:
                break
        assert "broken" not in activity, "no quiet window in four cooldowns"
        assert calls["details"] == 0 and calls["tools"] == 0, calls

        # A real change of the selected server still refreshes the page.
        select(desktop, "tiny")
        await until(lambda: calls["details"] >= 1, 10, "the selection's refresh")
        calls.clear()
        desktop.server_action(ActionId.RESTART, "tiny")
        await until(lambda: calls["details"] >= 1, 30, "a refresh after the restart")
        await until(lambda: status_of(desktop, "tiny") is Status.RUNNING, 30, "tiny runs again")


async def test_the_overview_health_follows_a_call_made_from_another_tab() -> None:
    """A call from Try it counts in the Overview's health when the Overview is shown
    again, without selecting another server and back."""
    write_global(f'[mcp.tiny]\ncommand = {command("tiny.py")}\ntrust = "full"\n')
    async with running_app("tiny") as desktop:
        pages = desktop.pages
        select(desktop, "tiny")
        health = pages.overview.health
        await until(lambda: health.health is not None, 30, "the Overview's health")
        assert health.health is not None and health.health.calls == 0
        tools = pages.tools
        desktop.window.page.setCurrentWidget(tools)
        await until(lambda: tools.row_of("echo") is not None, 30, "tiny's tools")
        tools.select_tool("echo")
        tools.form.fields["text"].widget.setText("hello health")  # type: ignore[union-attr]
        tools.call_button.click()
        await until(lambda: "hello health" in tools.result_view.toPlainText(), 30, "echo")
        # The call's activity reached the page (coalesced) while the Overview was hidden.
        await until(lambda: pages._overview_stale, 10, "the Overview marked stale")
        desktop.window.page.setCurrentWidget(pages.overview)
        await until(lambda: health.health is not None and health.health.calls >= 1, 10, "the call")
        assert "Calls (last hour)" in health.table.text() and health.isVisibleTo(pages.overview)
