"""Attack 7 (issue 21): look-alike domains. A server's URL elicitation to
``https://ɡithub.com/…`` (U+0261 LATIN SMALL LETTER SCRIPT G) or to the all-Cyrillic
``аррӏе.com`` got no warning, and the dialog said "The site is github.com". Rule: every
URL shown to a person (URL elicitation, sign-in pages, a link's origin) shows the
registrable domain first, its punycode form beside the Unicode one, and a warning for a
mixed-script or whole-script look-alike. Real asker server over stdio, the real policy,
the real terminal prompter and the real dialogs offscreen."""

from __future__ import annotations

import io
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from portico.cli.terminal_prompter import TerminalPrompter
from portico.config.deeplink import parse_add_link, prepare
from portico.config.model import ElicitationSpec
from portico.policy.setup import Policy
from portico.prompts import AuthorizeRequest, ElicitationAnswer, ElicitationRequest
from portico.runtime.hub import Hub
from portico.ui.chat.markdown_view import RichLabel
from portico.ui.dialogs.deeplink_dialog import DeepLinkDialog
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.dialogs.oauth_dialog import OAuthDialog
from portico.ui.dialogs.open_link_dialog import OpenLinkDialog
from tests.helpers.person import ScriptedPerson
from tests.helpers.specs import asker_spec, config_of

pytestmark = pytest.mark.slow  # starts the asker server

SCRIPT_G = "https://\u0261ithub.com/login/oauth/authorize"  # ɡithub.com
CYRILLIC = "https://\u0430\u0440\u0440\u04cf\u0435.com/account"  # аррӏе.com


class _ThroughTerminal(ScriptedPerson):
    """The person at a real terminal prompter: each elicitation is printed and answered
    there (and recorded); any other question fails the test."""

    def __init__(self, terminal: TerminalPrompter) -> None:
        super().__init__()
        self.terminal = terminal

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.asked.append(("elicit", request))
        return await self.terminal.elicit(request)


async def _asked(url: str) -> tuple[ElicitationRequest, str]:
    """What the real policy asks for a server's URL elicitation, and what the terminal
    prompter printed for it (the person declines)."""
    out = io.StringIO()
    person = _ThroughTerminal(TerminalPrompter(io.StringIO("d\n"), out))
    policy = Policy(person)
    policy.elicitation.opener = _never_opened
    spec = asker_spec("pay", elicitation=ElicitationSpec(allow_url=True))
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(config_of(spec))
        result = await hub.registry.call("pay__link", {"url": url})
    assert result.text() == "decline"
    [request] = person.requests("elicit")
    return request, out.getvalue()


async def _never_opened(url: str) -> None:
    raise AssertionError(f"{url} was opened without consent")


async def test_a_latin_look_alike_letter_is_named_in_the_terminal_and_the_dialog(
    qtbot: QtBot,
) -> None:
    request, printed = await _asked(SCRIPT_G)
    assert "  Site: \u0261ithub.com (punycode xn--ithub-qmc.com)" in printed
    assert "The site is github.com" not in printed
    assert f"\n  {SCRIPT_G}\n" in printed  # the address whole, on its own line to copy
    assert "U+0261 LATIN SMALL LETTER SCRIPT G) only looks like 'g'" in printed
    dialog = ElicitationDialog(request)
    qtbot.addWidget(dialog)
    assert dialog.site_label.text() == "The site is \u0261ithub.com (punycode xn--ithub-qmc.com)"
    assert any("only looks like 'g'" in label.text() for label in dialog.warning_labels)


async def test_a_whole_script_cyrillic_name_is_warned_about(qtbot: QtBot) -> None:
    request, printed = await _asked(CYRILLIC)
    assert "(punycode xn--80ak6aa92e.com)" in printed
    assert "entirely in Cyrillic letters that look like Latin ones" in printed
    dialog = ElicitationDialog(request)
    qtbot.addWidget(dialog)
    assert any("Cyrillic" in label.text() for label in dialog.warning_labels)


def test_a_sign_in_page_on_a_look_alike_host_is_warned_about(qtbot: QtBot) -> None:
    url = "https://login.\u0430\u0440\u0440\u04cf\u0435.com/authorize?client_id=x&state=s"
    dialog = OAuthDialog(
        AuthorizeRequest(
            server="docs",
            authorize_url=url,
            redirect_uri="http://127.0.0.1:8765/cb",
            timeout=60,
            browser_opened=False,
        )
    )
    qtbot.addWidget(dialog)
    lines = dialog.url_lines
    # the registrable domain first: the site is аррӏе.com, whatever the subdomain says
    assert lines.site_label.text() == (
        "The sign-in page is on \u0430\u0440\u0440\u04cf\u0435.com (punycode xn--80ak6aa92e.com)"
    )
    assert lines.warning_labels and "Cyrillic" in lines.warning_labels[0].text()


def test_a_link_s_origin_on_a_look_alike_host_is_warned_about(qtbot: QtBot) -> None:
    link = "portico://add?name=gh&url=" + quote(SCRIPT_G, safe="")
    dialog = DeepLinkDialog(prepare(parse_add_link(link)))
    qtbot.addWidget(dialog)
    target = dialog.target_view.toPlainText().splitlines()
    assert target[:2] == [
        "It sends requests to https://xn--ithub-qmc.com",
        "Site: \u0261ithub.com (punycode xn--ithub-qmc.com)",
    ]
    assert any("only looks like 'g'" in label.text() for label in dialog.warning_labels)


class _Browser(QObject):
    """Stands in for the system browser: Qt hands it every https URL it would open."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


@pytest.fixture
def browser() -> Iterator[_Browser]:
    catcher = _Browser()
    QDesktopServices.setUrlHandler("https", catcher, "open")
    yield catcher
    QDesktopServices.unsetUrlHandler("https")


def _asking() -> OpenLinkDialog | None:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, OpenLinkDialog)]
    return next((w for w in found if w.isVisible()), None)


def test_a_chat_link_to_a_look_alike_host_asks_before_it_opens(
    qtbot: QtBot, browser: _Browser
) -> None:
    label = RichLabel('<a href="https://\u0261ithub.com/x">github.com</a>')
    qtbot.addWidget(label)
    label.linkActivated.emit("https://\u0261ithub.com/x")  # the person clicks the link
    dialog = _asking()
    assert dialog is not None and browser.opened == []
    assert dialog.lines.site_label.text() == (
        "The site is \u0261ithub.com (punycode xn--ithub-qmc.com)"
    )
    assert any("only looks like 'g'" in w.text() for w in dialog.lines.warning_labels)
    assert dialog.cancel_button.hasFocus() or not dialog.isActiveWindow()
    dialog.cancel_button.click()
    assert browser.opened == []
    label.linkActivated.emit("https://\u0261ithub.com/x")
    again = _asking()
    assert again is not None
    again.open_button.click()
    assert browser.opened == ["https://\u0261ithub.com/x"]  # only after Open in browser
    label.linkActivated.emit("https://example.com/docs")  # nothing misleading: opens at once
    assert _asking() is None
    assert browser.opened[-1] == "https://example.com/docs"
