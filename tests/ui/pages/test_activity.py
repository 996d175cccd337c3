"""The Activity tab and the Overview's health against server-everything over Streamable
HTTP: every call appears with its timing, its status and who asked for it, header secrets
are masked, the list is searchable and exports as JSON Lines; health shows the calls'
latency."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.ui.pages.activity import ActivityPage
from tests.helpers.servers import EVERYTHING, NODE, free_port, wait_port
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = [
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed"),
    pytest.mark.slow,  # real servers, processes or the app
]

SECRET = "s3cret-token-value"


@pytest.fixture
def everything_http() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(NODE), str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _row_of(page: ActivityPage, method: str, status: str = "ok") -> int | None:
    for row, entry in enumerate(page.model.items):
        if entry.method == method and entry.status == status and entry.duration is not None:
            return row
    return None


async def test_activity_shows_calls_with_timing_and_masks_header_secrets(
    everything_http: str, tmp_path: Path
) -> None:
    write_global(
        f'[mcp.everything]\nurl = "{everything_http}"\ntrust = "full"\n'
        f'headers = {{ Authorization = "Bearer {SECRET}", X-Trace = "visible-value" }}\n'
    )
    async with running_app("everything") as desktop:
        pages = desktop.pages
        select(desktop, "everything")
        tools = pages.tools
        await until(lambda: tools.row_of("echo") is not None, 30, "everything's tools")
        tools.select_tool("echo")
        tools.form.fields["message"].widget.setText("hello activity")  # type: ignore[union-attr]
        tools.call_button.click()
        await until(lambda: "hello activity" in tools.result_view.toPlainText(), 30, "echo")

        desktop.window.page.setCurrentWidget(pages.activity)
        activity = pages.activity
        row = await until(lambda: _row_of(activity, "tools/call"), 30, "the call in Activity")
        entry = activity.model.items[row]
        assert entry.direction == "out" and entry.duration is not None and entry.size > 0
        assert activity.model.text(row, 1).startswith("→ request")
        assert activity.model.text(row, 3) == "Try it"  # who asked for the call
        assert activity.model.text(row, 5).endswith("ms")
        # the handshake and the list requests are there too, each with a status
        methods = {e.method for e in activity.model.items}
        assert {"initialize", "tools/list", "tools/call"} <= methods
        activity.select_row(row)
        shown = activity.detail.toPlainText()
        data = json.loads(shown)
        assert data["message"]["params"]["name"] == "echo"
        assert data["reply"]["result"]["content"][0]["text"].endswith("hello activity")
        headers = {k.lower(): v for k, v in data["headers"].items()}
        assert headers["authorization"] == "********"
        assert headers["x-trace"] == "visible-value"
        assert SECRET not in shown

        # searching narrows the list; the count says how many of all
        activity.search.setText("hello activity")
        await until(lambda: activity.model.rowCount() == 1, 5, "the search")
        assert activity.count.text().startswith("1 of ")
        activity.search.clear()
        await until(lambda: activity.model.rowCount() > 1, 5, "the whole list again")

        # export: JSON Lines, every line an exchange, secrets masked
        target = tmp_path / "everything.jsonl"
        exported: list[int] = []
        activity.exported.connect(lambda _path, count: exported.append(count))
        activity.export_to("everything", target)
        await until(lambda: exported, 30, "the export")
        text = target.read_text(encoding="utf-8")
        lines = [json.loads(line) for line in text.splitlines()]
        assert len(lines) == exported[0] >= 3
        assert any(line["method"] == "tools/call" for line in lines)
        assert SECRET not in text and "********" in text

        # Health on the Overview: the call counted, with its latency and the sparkline
        desktop.window.page.setCurrentWidget(pages.overview)
        pages.refresh()
        health = pages.overview.health
        await until(lambda: health.health is not None and health.health.calls >= 1, 30, "health")
        assert health.health is not None and health.health.p50 is not None
        assert "Latency p50 / p95" in health.table.text()
        assert health.sparkline.values and health.isVisibleTo(pages.overview)
