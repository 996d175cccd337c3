"""What ``portico chat`` says when ``@server:uri`` attaches a resource: its text's length,
or that it is an image (it said "0 characters" for an image blob)."""

from __future__ import annotations

import io

from portico.chat.events import AttachmentAdded
from portico.cli.chat_cmds import Renderer


def test_an_attached_resource_is_named_with_its_size_or_as_an_image() -> None:
    out, note = io.StringIO(), io.StringIO()
    renderer = Renderer(out, note, as_json=False, direct_results=False)
    renderer.show(AttachmentAdded("pictures", "pictures://notes.txt", "n", "text/plain", 45))
    renderer.show(AttachmentAdded("pictures", "pictures://logo.png", "l", "image/png", 0))
    assert note.getvalue().splitlines() == [
        "Attached pictures://notes.txt from pictures (45 characters)",
        "Attached pictures://logo.png from pictures (an image, image/png)",
    ]
    assert out.getvalue() == ""
