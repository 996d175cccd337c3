"""Attack 6 (issue 21): a ``portico://add`` link skipped review. Its server went to the
global file, so no trust review followed, and the next connect sent
``Authorization: Bearer ${keyring:GITHUB_PAT}`` to the link's URL; the dialog listed no
secrets, and a long ``${env:…}`` value scrolled out of view. Rules: a linked server lands
pending review (``from_link``, reviewed like a project server), and the confirmation (the
app's dialog, ``portico --open-url`` in a terminal) lists each secret it would receive,
every value and the origin it would go to, each line whole. Real links, the real loader,
hub and gate, a recording HTTP server on 127.0.0.1, the real dialog offscreen."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from pytestqt.qtbot import QtBot

from portico import paths
from portico.auth.secret_store import SecretStore
from portico.cli.desktop import confirm_link_in_terminal
from portico.config import load
from portico.config.deeplink import parse_add_link, prepare
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.trust import LINK_REASON
from portico.runtime.events import Status
from portico.services import build_services
from portico.ui.dialogs.deeplink_dialog import DeepLinkDialog
from tests.helpers.keyrings import MemoryKeyring, memory_keyring
from tests.helpers.servers import Seen
from tests.helpers.servers import recording_server as start_recording_server

__all__ = ["memory_keyring"]

TOKEN = "ghp_the-person-s-real-token"
SECRET_LINE = "header Authorization \u2190 keyring secret GITHUB_PAT"
# A long value: at 640 px it is far wider than the dialog.
LONG_ENV = "--require=${env:HOME}/" + "x" * 300 + "/${env:AWS_SECRET_ACCESS_KEY}/end-of-value"


@pytest.fixture
def recording_server() -> Iterator[tuple[int, Seen]]:
    with start_recording_server() as running:
        yield running


def _url_link(port: int) -> str:
    return (
        "portico://add?name=gh&url="
        + quote(f"http://127.0.0.1:{port}/mcp", safe="")
        + "&header="
        + quote("Authorization: Bearer ${keyring:GITHUB_PAT}", safe="")
    )


STDIO_LINK = "portico://add?name=notes&command=node&arg=server.js&env=" + quote(
    f"NODE_OPTIONS={LONG_ENV}", safe=""
)


async def test_a_linked_server_waits_for_review_and_never_sends_the_token(
    memory_keyring: MemoryKeyring, recording_server: tuple[int, Seen]
) -> None:
    port, seen = recording_server
    await SecretStore().store_secret("GITHUB_PAT", TOKEN)
    prepare(parse_add_link(_url_link(port))).write()  # what the dialog's Add does
    config = load(None)
    spec = config.server("gh")
    assert spec is not None and spec.from_link
    services = build_services(NonInteractivePrompter(), config=config)
    hub = services.start_hub()
    try:
        await hub.apply(config)
        state = None
        for _ in range(300):
            state = next((s for s in hub.states() if s.name == "gh"), None)
            if state is not None and state.status is Status.AWAITING_TRUST:
                break
            await asyncio.sleep(0.02)
        assert state is not None and state.status is Status.AWAITING_TRUST, state
        await asyncio.sleep(0.5)  # time enough for a connect that should never happen
        assert seen.requests == [], "the token went to the link's URL unreviewed"
        review = await services.policy.trust.check(spec)
        assert review is not None
        assert LINK_REASON in review.request.reasons
        assert SECRET_LINE in review.request.secrets
    finally:
        await hub.close()


def _shown(qtbot: QtBot, link: str) -> DeepLinkDialog:
    dialog = DeepLinkDialog(prepare(parse_add_link(link)))
    qtbot.addWidget(dialog)
    dialog.resize(640, 400)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def test_the_dialog_lists_each_secret_and_the_origin(qtbot: QtBot) -> None:
    dialog = _shown(qtbot, _url_link(8123))
    assert dialog.secrets_view.isVisible()
    assert dialog.secrets_view.toPlainText() == SECRET_LINE
    target = dialog.target_view.toPlainText().splitlines()
    assert target[0] == "It sends requests to http://127.0.0.1:8123"
    assert "header Authorization = Bearer ${keyring:GITHUB_PAT}" in (
        dialog.values_view.toPlainText()
    )
    assert "trust review" in dialog.pending_label.text()
    assert "from_link = true" in dialog.text_view.toPlainText()


def test_a_long_env_value_is_shown_whole_wrapped_never_scrolled_away(qtbot: QtBot) -> None:
    dialog = _shown(qtbot, STDIO_LINK)
    qtbot.waitUntil(lambda: dialog.values_view.width() > 100)
    values = dialog.values_view
    assert values.toPlainText() == f"env NODE_OPTIONS = {LONG_ENV}"
    assert dialog.width() < 1000  # wrapped in the dialog, not widened past the screen
    for view in dialog.views():
        if view.isVisible():
            assert view.fully_shown(), view.accessibleName()
            assert view.height() >= view.document().size().height()
    # wrapped: the one line takes several rows, every row inside the view
    assert values.document().size().height() > 3 * values.fontMetrics().height()
    assert values.viewport().height() >= values.document().size().height() - 1
    assert "${env:AWS_SECRET_ACCESS_KEY}" in dialog.text_view.toPlainText()


def test_the_terminal_confirmation_lists_the_same_and_the_server_lands_pending(
    portico_home: Path,
) -> None:
    out = io.StringIO()
    assert confirm_link_in_terminal(_url_link(8123), io.StringIO("y\n"), out) == 0
    text = out.getvalue()
    assert "It sends requests to http://127.0.0.1:8123" in text
    assert f"  {SECRET_LINE}" in text
    assert "header Authorization = Bearer ${keyring:GITHUB_PAT}" in text
    assert "waits for your review" in text
    spec = load(None).server("gh")
    assert spec is not None and spec.from_link
    assert "from_link = true" in paths.paths().global_toml.read_text(encoding="utf-8")


def test_open_url_without_a_display_prints_every_line_whole_and_adds_nothing(
    portico_home: Path,
) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    done = subprocess.run(
        [sys.executable, "-m", "portico.cli.desktop", "--open-url", STDIO_LINK],
        capture_output=True,
        text=True,
        env={**env, "PORTICO_HOME": str(portico_home)},
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert f"  env NODE_OPTIONS = {LONG_ENV}\n" in done.stdout  # one line, not cut
    assert "It runs on this computer: node server.js" in done.stdout
    assert "Nothing was added" in done.stderr
    assert not paths.paths().global_toml.exists()


def test_a_bidi_override_in_a_linked_value_is_shown_never_obeyed(qtbot: QtBot) -> None:
    link = "portico://add?name=gh&url=https://mcp.example.com/mcp&header=" + quote(
        "X-Note: \u202eNEPO_SI_SIHT", safe=""
    )
    dialog = _shown(qtbot, link)
    shown = dialog.values_view.toPlainText()
    assert "\u202e" not in shown and shown == "header X-Note = <U+202E>NEPO_SI_SIHT"
