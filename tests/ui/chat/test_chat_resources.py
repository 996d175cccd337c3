"""Resources and images in the chat, as a person meets them in the real app (scripted model
server, tests/servers/pictures.py):

- ``@`` offers the servers' resources (and a template), filtered as one types and picked
  with the keyboard; a picked resource is a chip, read through its server on send: text
  inline named by its URI, an image blob as an image to the vision model, a binary said
  in a line; the sent message shows each one's name, type and size, the image as a picture;
- a dropped file's chip shows its size, a too-big one says so before anything is sent;
- a tool result holding an embedded image resource shows the image (click: full size),
  live and after the chat is read again from the store, and the model gets the image.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtWidgets import QLabel, QToolButton
from pytestqt.qtbot import QtBot

from portico.config.document import ConfigDocument
from portico.paths import paths
from portico.ui.chat.thumbnails import ImageThumb
from portico.ui.onboarding.setup import add_provider
from tests.servers.model_server import ModelServer, text, tool_call
from tests.servers.pictures import LOGO_PNG, NOTES
from tests.ui.chat_helpers import model_server, models, running_app
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]

PICTURES = Path(__file__).parents[2] / "servers" / "pictures.py"


def _config(server: ModelServer) -> None:
    path = paths().global_toml
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = ConfigDocument.open(path)
    doc.add_server(
        "pictures", {"command": sys.executable, "args": [str(PICTURES)], "trust": "full"}
    )
    doc.save()
    add_provider(
        "scripted",
        kind="openai",
        base_url=server.openai_url,
        key_ref=None,
        models=["vision-test"],
        default_model="vision-test",
        vision=True,
        path=path,
    )


def _chips(composer) -> list[QToolButton]:  # type: ignore[no-untyped-def]
    return [
        w
        for w in composer.findChildren(QToolButton)
        if w.accessibleName().startswith("Remove attachment") and w.isVisible()
    ]


def _user_content(models: ModelServer, index: int) -> list[dict]:  # type: ignore[type-arg]
    [user] = [m for m in models.requests[index].body["messages"] if m["role"] == "user"][-1:]
    content = user["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


async def _pictures_running(desktop) -> None:  # type: ignore[no-untyped-def]
    from portico.runtime.events import Status

    def running() -> bool:
        state = desktop.model.state("pictures")
        return state is not None and state.status is Status.RUNNING

    await until(running, 60, "the pictures server to run")


async def test_at_offers_resources_as_chips_sent_with_type_size_and_image(
    models: ModelServer, qtbot: QtBot, tmp_path: Path
) -> None:
    _config(models)
    models.script(text("A blue banner and some notes."), text("Noted."))
    async with running_app(wait_for_server=False) as desktop:
        await _pictures_running(desktop)
        chat = desktop.chat
        composer, field, popup = chat.composer, chat.composer.input, chat.composer.popup

        # "@" offers every resource of the server, and the template to fill in
        qtbot.keyClicks(field, "Look at @")
        await until(lambda: popup.isVisible() and len(popup.rows()) == 4, 30, "the resources")
        labels = [r.label for r in popup.rows()]
        assert sorted(labels) == [
            "@pictures:pictures://data.bin",
            "@pictures:pictures://items/{item_id}",
            "@pictures:pictures://logo.png",
            "@pictures:pictures://notes.txt",
        ]
        # typing filters (in the URI and the name); Down / Up move, Enter takes the
        # highlighted one as a chip
        qtbot.keyClicks(field, "d")  # data.bin and the template's {item_id}
        assert [r.label for r in popup.rows()] == [
            "@pictures:pictures://data.bin",
            "@pictures:pictures://items/{item_id}",
        ]
        qtbot.keyClick(field, Qt.Key.Key_Backspace)
        await until(lambda: len(popup.rows()) == 4, 10, "all four again")
        qtbot.keyClicks(field, "o")  # notes.txt, logo.png
        assert [r.label for r in popup.rows()] == [
            "@pictures:pictures://notes.txt",
            "@pictures:pictures://logo.png",
        ]
        qtbot.keyClick(field, Qt.Key.Key_Down)  # logo
        qtbot.keyClick(field, Qt.Key.Key_Up)  # notes
        qtbot.keyClick(field, Qt.Key.Key_Down)  # logo
        qtbot.keyClick(field, Qt.Key.Key_Return)
        assert not popup.isVisible()
        assert field.toPlainText() == "Look at "  # the typed @word became the chip
        assert [c.text() for c in _chips(composer)] == ["🔗 pictures://logo.png (pictures)  ✕"]
        for word in ("notes", "data"):  # the others, by Tab this time
            qtbot.keyClicks(field, f"@{word}")
            await until(lambda: popup.isVisible() and len(popup.rows()) == 1, 30, word)
            qtbot.keyClick(field, Qt.Key.Key_Tab)
        assert sorted(c.text() for c in _chips(composer)) == [
            "🔗 pictures://data.bin (pictures)  ✕",
            "🔗 pictures://logo.png (pictures)  ✕",
            "🔗 pictures://notes.txt (pictures)  ✕",
        ]
        assert field.toPlainText() == "Look at "
        qtbot.keyClick(field, Qt.Key.Key_Return)
        await until(lambda: not chat.running and len(chat.transcript.messages) == 2, 60, "turn")
        assert _chips(composer) == []

        # the model got the notes inline under their URI, the logo as an image, the
        # binary said plainly
        parts = _user_content(models, 0)
        words = "\n".join(p["text"] for p in parts if p["type"] == "text")
        assert words.startswith("Look at")
        assert f"```pictures://notes.txt\n{NOTES}\n```" in words
        assert "[pictures://data.bin is 8 B of application/octet-stream: not text" in words
        assert "[Attached image: resource pictures://logo.png from server pictures]" in words
        [image] = [p for p in parts if p["type"] == "image_url"]
        assert image["image_url"]["url"].startswith("data:image/")

        # the sent message: each attachment's name, type and size; the image as a picture
        user = chat.transcript.message_widget(chat.transcript.messages[0].id)
        assert user is not None
        lines = sorted(
            w.text() for w in user.findChildren(QLabel) if w.accessibleName().startswith("attach")
        )
        assert lines == [
            "🔗 pictures://data.bin (application/octet-stream, 8 B, from pictures)",
            f"🔗 pictures://logo.png (image/png, {len(LOGO_PNG)} B, from pictures)",
            f"🔗 pictures://notes.txt (text/plain, {len(NOTES.encode())} B, from pictures)",
        ]
        [thumb] = user.findChildren(ImageThumb)
        await until(lambda: thumb.decoded, 10, "the thumbnail decoded (in a worker)")
        assert thumb.isVisible() and thumb.pixmap().width() == 40
        qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
        assert thumb.viewer is not None and thumb.viewer.isVisible()
        thumb.viewer.close()

        # a dropped file: its chip says its size; one too big says so before sending
        small = tmp_path / "plan.md"
        small.write_text("x" * 1500)
        big = tmp_path / "huge.log"
        big.write_bytes(b"y" * (600 * 1024))
        drop = QMimeData()
        drop.setUrls([QUrl.fromLocalFile(str(small)), QUrl.fromLocalFile(str(big))])
        field.insertFromMimeData(drop)
        await until(lambda: all("(" in c.text() for c in _chips(composer)), 30, "the sizes")
        texts = [c.text() for c in _chips(composer)]
        assert texts == [
            "📄 plan.md (1.5 KiB)  ✕",
            "📄 huge.log (600.0 KiB) — too big: the limit for text files is 512.0 KiB  ✕",
        ]
        assert "huge.log cannot be sent" in _chips(composer)[1].toolTip()
        _chips(composer)[1].click()  # removed, as its chip asks
        await until(lambda: len(_chips(composer)) == 1, 10, "the big file's chip to go")
        qtbot.keyClicks(field, "and the plan")
        qtbot.keyClick(field, Qt.Key.Key_Return)
        await until(lambda: not chat.running and len(chat.transcript.messages) == 4, 60, "turn")
        second_user = chat.transcript.message_widget(chat.transcript.messages[2].id)
        assert second_user is not None
        [line] = [
            w.text()
            for w in second_user.findChildren(QLabel)
            if w.accessibleName().startswith("attach")
        ]
        assert line == "📎 plan.md (text/markdown, 1.5 KiB)"


async def test_an_image_resource_in_a_tool_result_is_shown_as_an_image(
    models: ModelServer, qtbot: QtBot
) -> None:
    _config(models)
    models.script(tool_call("pictures__snapshot", {}), text("It is green."))
    async with running_app(wait_for_server=False) as desktop:
        await _pictures_running(desktop)
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "Take a snapshot")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running and len(chat.transcript.messages) == 2, 60, "turn")

        def shown() -> tuple[ImageThumb, str]:
            [card] = chat.cards.values()
            [thumb] = card.thumbs
            assert card.result_text is not None
            return thumb, card.result_text.text()

        def visible() -> tuple[ImageThumb, str] | None:
            try:
                thumb, words = shown()
            except ValueError:  # the card is being drawn again
                return None
            return (thumb, words) if thumb.isVisible() and thumb.decoded else None

        for when in ("live", "read again from the store"):
            # a widget added to a shown layout is shown on the loop's next turn (Qt queues it)
            thumb, words = await until(visible, 10, f"the thumbnail shown ({when})")
            assert (thumb.pixmap().width(), thumb.pixmap().height()) == (12, 6), when
            assert words == "a green snapshot", when  # no placeholder, no base64
            qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
            assert thumb.viewer is not None and thumb.viewer.isVisible(), when
            thumb.viewer.close()
            await chat.reload_current()
        # the model got the picture with the result
        sent = models.requests[1].body["messages"]
        urls = [
            part["image_url"]["url"]
            for m in sent
            if isinstance(m.get("content"), list)
            for part in m["content"]
            if part.get("type") == "image_url"
        ]
        assert len(urls) == 1 and urls[0].startswith("data:image/")
