"""Attached files end to end: what each provider's wire gets for an image, a text file, a
PDF and a resource (the scripted model server records the real SDKs' requests), the store
round trip, and bad files refused with a line naming them before anything is sent."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from portico.chat import attachments
from portico.chat.events import TurnFailed, TurnFinished
from portico.chat.export import to_markdown
from portico.chat.messages import Attachment
from tests.chat.conftest import chat_setup, collect, everything_spec, needs_npm, provider
from tests.servers.model_server import text


def _file(path: Path) -> Attachment:
    return Attachment("file", path.name, path=path)


def _pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF whose page shows ``lines`` (a real content stream, Helvetica)."""
    ops = "".join(
        f"BT /F1 12 Tf 72 {720 - 20 * i} Td ({line}) Tj ET\n" for i, line in enumerate(lines)
    )
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(ops)} >>\nstream\n{ops}endstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode())
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    out.write(trailer.encode())
    path.write_bytes(out.getvalue())
    return path


def _blank_pdf(path: Path) -> Path:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    with path.open("wb") as f:
        writer.write(f)
    return path


async def test_openai_gets_the_image_as_a_data_url_and_the_text_file_fenced(
    models, tmp_path: Path
) -> None:
    photo = tmp_path / "photo.png"
    Image.new("RGB", (3000, 1000), (200, 10, 10)).save(photo)
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\nuse ``` sparingly\n")
    report = _pdf(tmp_path / "report.pdf", ["Quarterly revenue rose 12 percent"])
    models.script(text("Seen."))
    seeing = provider(models, "seeing", models=("vision-test",), vision=True)
    async with chat_setup(providers=(seeing,)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("look", [_file(photo), _file(notes), _file(report)]))
    assert isinstance(run.last, TurnFinished), run.last
    [user] = [m for m in models.requests[0].body["messages"] if m["role"] == "user"]
    first, picture = user["content"]
    assert first["type"] == "text"
    assert first["text"] == (
        "look\n\n[Attached file notes.md]\n````notes.md\n# Plan\nuse ``` sparingly\n````"
        "\n\n[Attached file report.pdf]\n```report.pdf\n--- page 1 ---\n"
        "Quarterly revenue rose 12 percent\n```"
    )
    assert picture["type"] == "image_url"
    url = picture["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert sent.size == (1568, 523)  # downscaled, the aspect kept


async def test_anthropic_gets_an_image_block_with_a_base64_source(models, tmp_path: Path) -> None:
    photo = tmp_path / "small.jpg"
    Image.new("RGB", (40, 30), (0, 90, 0)).save(photo, "JPEG")
    notes = tmp_path / "todo.txt"
    notes.write_text("buy milk")
    models.script(text("Seen."))
    spec = provider(models, "claude", kind="anthropic", vision=True)
    async with chat_setup(providers=(spec,)) as s:
        chat = await s.host.new("claude/claude-test")
        await collect(chat.send("what is this?", [_file(photo), _file(notes)]))
    [user] = models.requests[0].body["messages"]
    words, image = user["content"]
    assert words == {
        "type": "text",
        "text": "what is this?\n\n[Attached file todo.txt]\n```todo.txt\nbuy milk\n```",
    }
    assert image["type"] == "image"
    assert image["source"]["type"] == "base64" and image["source"]["media_type"] == "image/jpeg"
    assert base64.b64decode(image["source"]["data"]) == photo.read_bytes()  # small: as it was


async def test_a_model_without_vision_is_not_sent_an_image(models, tmp_path: Path) -> None:
    photo = tmp_path / "photo.png"
    Image.new("RGB", (10, 10)).save(photo)
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("look", [_file(photo)]))
        assert chat.messages == []
    assert isinstance(run.last, TurnFailed) and run.last.kind == "attachment"
    assert run.last.error.startswith("photo.png: scripted/gpt-test does not take images")
    assert models.requests == []


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda d: d / "gone.txt", "gone.txt: cannot be read (No such file or directory)"),
        (
            lambda d: (
                (d / "big.log").write_bytes(b"x" * (attachments.MAX_TEXT_BYTES + 1))
                and d / "big.log"
            ),
            "big.log: 512.0 KiB is over the 512.0 KiB limit for text files",
        ),
        (
            lambda d: (
                (d / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
                and d / "broken.png"
            ),
            "broken.png: is not a readable image",
        ),
        (lambda d: _blank_pdf(d / "scan.pdf"), "scan.pdf: the PDF has no text to read"),
        (
            lambda d: (d / "tool.bin").write_bytes(b"\x7fELF\x02\x00\x00\x01") and d / "tool.bin",
            "tool.bin: is a binary file (not text, an image or a PDF)",
        ),
    ],
)
async def test_a_bad_file_is_named_and_nothing_is_sent(models, tmp_path: Path, make, says) -> None:  # type: ignore[no-untyped-def]
    bad = make(tmp_path)
    good = tmp_path / "fine.txt"
    good.write_text("fine")
    seeing = provider(models, "seeing", models=("vision-test",), vision=True)
    async with chat_setup(providers=(seeing,)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("look", [_file(good), _file(bad)]))
        assert chat.messages == []  # nothing stored half-way
    assert isinstance(run.last, TurnFailed) and run.last.kind == "attachment"
    assert run.last.error.startswith(says), run.last.error
    assert "nothing was sent" in run.last.error.lower()
    assert models.requests == []


async def test_attachments_survive_the_store_an_edit_and_the_export(models, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("version one")
    report = _pdf(tmp_path / "report.pdf", ["Signed by both parties"])
    models.script(text("One."), text("Two."))
    store = tmp_path / "chats.db"
    async with chat_setup(providers=(provider(models),), store_path=store) as s:
        chat = await s.host.new()
        await collect(chat.send("read", [_file(notes), _file(report)]))
        chat_id = chat.id
    notes.write_text("version two: changed on disk after sending")
    async with chat_setup(providers=(provider(models),), store_path=store) as s:
        reopened = await s.host.open(chat_id)
        user = reopened.messages[0]
        assert [(a.name, a.mime_type, a.size) for a in user.attachments] == [
            ("notes.txt", "text/plain", len("version one")),
            ("report.pdf", "application/pdf", report.stat().st_size),
        ]
        assert user.attachments[0].text == "version one"
        await collect(reopened.edit(user.id, "read again"))
        stored = await s.host.store.load(chat_id)
    # the edit sent the same captured text, not what the file says now
    again = models.requests[1].body["messages"][-1]["content"]
    assert "```notes.txt\nversion one\n```" in again and "Signed by both parties" in again
    exported = to_markdown(stored)
    assert "> Attached: notes.txt (" in exported and "text/plain, 11 B)" in exported
    assert "report.pdf" in exported


@needs_npm
async def test_a_resource_goes_fenced_with_its_server(models) -> None:
    models.script(text("Read it."))
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        chat = await s.host.new()
        uri = "demo://resource/static/document/architecture.md"
        await collect(chat.send(f"summarise @everything:{uri}"))
    [user] = [m for m in models.requests[0].body["messages"] if m["role"] == "user"]
    head = f"summarise\n\n[Attached resource {uri} from server everything]\n```{uri}\n"
    assert user["content"].startswith(head)
    assert "Architecture" in user["content"] and user["content"].endswith("\n```")


def _pictures_spec():  # type: ignore[no-untyped-def]
    import sys

    from tests.helpers.specs import make_spec

    script = Path(__file__).parents[1] / "servers" / "pictures.py"
    return make_spec("pictures", command=sys.executable, args=(str(script),), connect_timeout=30.0)


async def test_an_image_resource_goes_to_a_vision_model_as_an_image_block(models) -> None:
    """``@server:uri`` (the CLI's and the composer's way) naming an image blob: the
    Messages API gets an image block and a line saying where it came from; a binary
    resource is one plain line; a model without vision is not sent the image."""
    from tests.servers.pictures import LOGO_PNG

    models.script(text("Blue."))
    claude = provider(models, "claude", kind="anthropic", vision=True)
    blind = provider(models, "blind")
    async with chat_setup(_pictures_spec(), providers=(claude, blind)) as s:
        chat = await s.host.new(model="claude/claude-test")
        run = await collect(chat.send("what colour? @pictures:pictures://logo.png"))
        assert isinstance(run.last, TurnFinished), run.last
        [stored] = [m for m in chat.messages if m.role == "user"]
        [logo] = stored.attachments
        assert (logo.kind, logo.name, logo.mime_type, logo.size) == (
            "resource",
            "pictures://logo.png",
            "image/png",
            len(LOGO_PNG),
        )
        assert logo.path is not None and logo.path.read_bytes() == LOGO_PNG
        other = await s.host.new(model="blind/gpt-test")
        refused = await collect(other.send("and this? @pictures:pictures://logo.png"))
        binary = await s.host.new(model="blind/gpt-test")
        models.script(text("Bytes."))
        await collect(binary.send("@pictures:pictures://data.bin"))
    [user] = [m for m in models.requests[0].body["messages"] if m["role"] == "user"]
    words, picture = user["content"]
    assert words["text"] == (
        "what colour?\n\n[Attached image: resource pictures://logo.png from server pictures]"
    )
    assert picture["type"] == "image" and picture["source"]["media_type"] == "image/png"
    assert base64.b64decode(picture["source"]["data"]) == LOGO_PNG
    assert isinstance(refused.last, TurnFailed) and refused.last.kind == "attachment"
    assert refused.last.error.startswith("pictures://logo.png: blind/gpt-test does not take")
    said = models.requests[1].body["messages"][-1]["content"]
    assert "[pictures://data.bin is 8 B of application/octet-stream: not text, an image" in said
