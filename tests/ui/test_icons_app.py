"""A server's announced icon reaches the server list (the real app, a real SDK server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon

from portico.paths import paths
from portico.runtime.events import ServerState, Status
from portico.runtime.icons import accept
from portico.ui.chat.tool_card import CardState, ToolCard
from portico.ui.icons import status_icon
from portico.ui.models.servers import ServerListModel
from tests.helpers.iconic import start_iconic
from tests.helpers.servers import RunningServer, stop_server
from tests.servers.iconic import EVIL_SVG, png_bytes
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

ICON_BLUE = QColor(42, 100, 184)  # tests/servers/iconic.py's png_bytes() colour
TOOL_RED = QColor(200, 40, 40)  # the colour of its tool "paint"'s icon
ICON_GREEN = QColor(40, 160, 60)  # its prompt's and resource's


@pytest.fixture
def iconic() -> Iterator[RunningServer]:
    server = start_iconic()
    yield server
    stop_server(server)


def _centre(icon: object) -> QColor:
    assert isinstance(icon, QIcon)
    image = icon.pixmap(16, 16).toImage()
    return image.pixelColor(image.width() // 2, image.height() // 2)


@pytest.mark.slow  # starts the app and tests/servers/iconic.py
async def test_server_icon_in_the_server_list(iconic: RunningServer) -> None:
    write_global(f'[mcp.iconic]\nurl = "{iconic.url}"\n')
    async with running_app("iconic") as desktop:
        row = desktop.model.row_of("iconic")
        assert row is not None
        index = desktop.model.index(row)
        await until(
            lambda: _centre(index.data(Qt.ItemDataRole.DecorationRole)) == ICON_BLUE,
            30,
            "the server's own icon in the list",
        )
        cached = sorted(str(p) for p in (paths().cache_dir / "icons").iterdir())
        state = desktop.model.state("iconic")
        assert state is not None and state.icon in cached
        assert len(cached) == 3 and all(p.endswith(".png") for p in cached)  # server, tool, green

        # A chat tool card of this server shows the same icon in its header.
        card = ToolCard(
            CardState(id="1", server="iconic", tool="paint", qualified_name="iconic__paint"),
            desktop.chat.transcript.icon_for("iconic"),
        )
        assert not card.icon.isHidden()
        pixmap = card.icon.pixmap()
        assert pixmap.toImage().pixelColor(8, 8) == ICON_BLUE

        # The tool table shows the tool's own (data:) icon beside its name.
        select(desktop, "iconic")
        page = desktop.pages.tools
        await until(
            lambda: page.server == "iconic" and page.row_of("paint") is not None, 30, "tools"
        )
        name_cell = page.model.index(page.row_of("paint"), 0)
        await until(
            lambda: _centre(name_cell.data(Qt.ItemDataRole.DecorationRole)) == TOOL_RED,
            30,
            "the tool's icon in the table",
        )

        # The Prompts and Resources tables show theirs beside the name.
        for tab, what in ((desktop.pages.prompts, "greet"), (desktop.pages.resources, "readme")):
            desktop.window.page.setCurrentWidget(tab)  # a person opens the tab
            await until(lambda t=tab: t.model.rowCount() == 1, 30, f"{what} listed")
            cell = tab.model.index(0, 0)
            assert _centre(cell.data(Qt.ItemDataRole.DecorationRole)) == ICON_GREEN, what


def test_list_falls_back_to_the_status_icon(qapp: object, tmp_path: Path) -> None:
    good = tmp_path / "good.png"
    good.write_bytes(png_bytes())
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    model = ServerListModel()
    model.update_state(ServerState("a", Status.RUNNING, icon=str(good)))
    model.update_state(ServerState("b", Status.RUNNING, icon=str(broken)))
    model.update_state(ServerState("c", Status.FAILED, icon=str(good)))
    model.update_state(ServerState("d", Status.RUNNING))
    svg = tmp_path / "clean.svg"  # what the runtime keeps of the malicious SVG
    svg.write_bytes(accept(EVIL_SVG, "image/svg+xml")[0])
    model.update_state(ServerState("e", Status.RUNNING, icon=str(svg)))

    def centre(row: int) -> QColor:
        return _centre(model.index(row).data(Qt.ItemDataRole.DecorationRole))

    assert centre(0) == ICON_BLUE
    assert centre(1) == _centre(status_icon(Status.RUNNING))  # undecodable: status icon
    assert centre(2) == _centre(status_icon(Status.FAILED))  # not running: its status shows
    assert centre(3) == _centre(status_icon(Status.RUNNING))
    assert centre(4) == ICON_BLUE  # its circle, in the same blue
