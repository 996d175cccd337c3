"""URL-mode elicitation in the app: the whole URL, its host in bold, look-alike warnings."""

from __future__ import annotations

import asyncio

from portico.policy.url_review import review_url
from portico.prompts import ElicitationAnswer, ElicitationRequest
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.facade import RuntimeThread
from portico.ui.prompter import QtPrompter
from tests.ui.qt_helpers import until


def _request(url: str) -> ElicitationRequest:
    review = review_url(url)
    return ElicitationRequest(
        server="pay",
        message="Confirm the payment",
        mode="url",
        url=review.url,
    )


async def test_the_host_stands_out_and_a_look_alike_is_warned_about(
    runtime: RuntimeThread,
) -> None:
    prompter = QtPrompter()
    answer = runtime.submit(prompter.elicit(_request("https://xn--pypal-4ve.com/pay?id=7")))
    dialog = await until(lambda: prompter.current, what="a dialog")
    assert isinstance(dialog, ElicitationDialog)
    assert dialog.url_label.text() == "https://<b>pаypal.com</b>/pay?id=7"
    assert dialog.site_label.text() == "The site is pаypal.com (punycode xn--pypal-4ve.com)"
    warnings = [label.text() for label in dialog.warning_labels]
    assert any("mixes Cyrillic and Latin" in text for text in warnings)
    assert dialog.accept_button.text() == "&Open in browser"
    dialog.decline_button.click()
    assert await asyncio.wait_for(answer, 5) == ElicitationAnswer("decline")


async def test_a_plain_address_has_no_warning_and_accept_consents(
    runtime: RuntimeThread,
) -> None:
    prompter = QtPrompter()
    answer = runtime.submit(prompter.elicit(_request("https://pay.example.com/x")))
    dialog = await until(lambda: prompter.current, what="a dialog")
    assert dialog.url_label.text() == "https://<b>pay.example.com</b>/x"
    assert dialog.warning_labels == []
    dialog.accept_button.click()
    assert await asyncio.wait_for(answer, 5) == ElicitationAnswer("accept")
