"""Images in the transcript are decoded off the GUI thread: an 8400x4200 PNG (~0.2 s idle to
decode) attached to a message and returned by a tool does not stall the GUI loop while
its thumbnail is made (tests/helpers/heartbeat.py measures the loop's longest gap)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from pytestqt.qtbot import QtBot

from portico.chat.messages import Attachment, Message
from portico.ui.chat.message_widget import MessageWidget
from portico.ui.chat.thumbnails import THUMB, ImageThumb
from portico.ui.chat.tool_card import CardState, ToolCard
from tests.helpers.heartbeat import Heartbeat, as_the_app_runs
from tests.ui.qt_helpers import until

SIDE = 8400


def _big_png(path: Path) -> bytes:
    from PySide6.QtGui import QColor, QImage

    image = QImage(SIDE, SIDE // 2, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    assert image.save(str(path))
    return path.read_bytes()


def _decode_ms(path: Path) -> float:
    from PySide6.QtGui import QImage

    start = time.perf_counter()
    assert not QImage(str(path)).isNull()
    return (time.perf_counter() - start) * 1000


async def test_large_images_do_not_stall_the_gui_loop(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "poster.png"
    data = await asyncio.to_thread(_big_png, path)  # made off the loop too
    cost = await asyncio.to_thread(_decode_ms, path)
    assert cost > 100, f"decoding took {cost:.0f} ms: too fast to tell a stall"
    heartbeat = Heartbeat()
    with as_the_app_runs():
        message = Message(
            "u1",
            "user",
            "Look",
            attachments=[Attachment("file", path.name, path=path, mime_type="image/png")],
        )
        widget = MessageWidget(message)
        qtbot.addWidget(widget)
        widget.show()
        state = CardState("c1", "pictures", "poster", "pictures__poster")
        card = ToolCard(state)
        qtbot.addWidget(card)
        card.show()
        state.outcome, state.text = "ok", "a poster"
        state.images.append(("poster.png", data))
        card.finish(state)
        thumbs = [*widget.findChildren(ImageThumb), *card.thumbs]
        assert len(thumbs) == 2 and not any(t.decoded for t in thumbs)  # not on this turn
        heartbeat.start()  # the widgets are built; their decodes run from the next turn
        await until(lambda: all(t.decoded for t in thumbs), 30, "both thumbnails")
        gap = heartbeat.stop()
    for thumb in thumbs:
        assert not thumb.failed
        assert (thumb.pixmap().width(), thumb.pixmap().height()) == (THUMB, THUMB // 2)
    print(f"decode {cost:.0f} ms each; longest GUI gap meanwhile {gap:.0f} ms")
    assert gap < min(150, cost / 2), f"the GUI loop stalled {gap:.0f} ms (decode: {cost:.0f} ms)"
