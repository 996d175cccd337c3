"""Announced icons reach the server list, the tool tables and the chat's tool cards (the
real app, a real SDK server, the scripted model server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon
from pytestqt.qtbot import QtBot

from portico.config.document import ConfigDocument
from portico.paths import paths
from portico.prompts import ApprovalChoice
from portico.runtime.events import ServerState, Status
from portico.runtime.icons import accept
from portico.ui.chat.tool_card import CardState, ToolCard
from portico.ui.icons import status_icon
from portico.ui.models.servers import ServerListModel
from tests.helpers.iconic import start_iconic
from tests.helpers.servers import RunningServer, stop_server
from tests.servers.iconic import EVIL_SVG, png_bytes
from tests.servers.model_server import ModelServer, text, tool_call
from tests.ui.chat_helpers import model_server, models, write_config
from tests.ui.chat_helpers import running_app as chat_app
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

__all__ = ["model_server", "models"]

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

        # A chat tool card of a tool without an icon of its own shows the server's.
        card = ToolCard(
            CardState(id="1", server="iconic", tool="other", qualified_name="iconic__other"),
            desktop.chat.transcript.icon_for("iconic", "other"),
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


@pytest.mark.slow  # starts the app, tests/servers/iconic.py and the scripted model server
async def test_a_chat_tool_card_shows_the_tools_own_icon(
    iconic: RunningServer, models: ModelServer, qtbot: QtBot
) -> None:
    """The model calls iconic's ``paint``: its card carries paint's icon from tools/list
    (red), not the server's (blue)."""
    path = write_config(models, everything=False)
    doc = ConfigDocument.open(path)
    doc.add_server("iconic", {"url": iconic.url})
    doc.save()
    models.script(tool_call("iconic__paint", {"color": "red"}), text("Painted."))
    async with chat_app(wait_for_server=False) as desktop:

        def icons_known() -> bool:
            state = desktop.model.state("iconic")
            return state is not None and state.status is Status.RUNNING and bool(state.tool_icons)

        await until(icons_known, 30, "iconic running with its tool icons")
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "Paint it red")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the tool card")
        assert card.state.tool == "paint"
        assert not card.icon.isHidden()
        assert card.icon.pixmap().toImage().pixelColor(8, 8) == TOOL_RED
        if card.approval is not None:  # an untrusted server's call asks first
            card.approval.buttons[ApprovalChoice.ONCE].click()
        await until(lambda: card.state.outcome == "ok", 30, "the call to finish")
        await until(lambda: not chat.running, 30, "the turn to end")
        assert card.icon.pixmap().toImage().pixelColor(8, 8) == TOOL_RED


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
