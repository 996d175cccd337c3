"""Every Prompter dialog, asked from the runtime thread the way the core asks it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    AuthorizeRequest,
    Caller,
    DeviceCodeRequest,
    ElicitationAnswer,
    ElicitationRequest,
    Notice,
    Prompter,
    SamplingAnswer,
    SamplingMessage,
    SamplingRequest,
    SpendApprovalRequest,
    ToolApprovalRequest,
    TrustChoice,
    TrustRequest,
)
from portico.ui.dialogs.base import PromptDialog
from portico.ui.facade import RuntimeThread
from portico.ui.prompter import QtPrompter
from tests.ui.qt_helpers import gone, until

TRUST = TrustRequest(
    server="github",
    source="/home/me/.config/portico/mcp.toml:12",
    project="/home/me/work",
    transport="stdio",
    target="npx -y @example/github-server --read-only",
    env_names=("GITHUB_TOKEN",),
    reasons=("This server has never been trusted.", "It runs a program on this computer."),
)

ARGS = {"path": "/tmp/x.txt", "content": "hello", "nested": {"n": 3}}
APPROVAL = ToolApprovalRequest(
    server="files",
    tool="write_file",
    qualified_name="files__write_file",
    description="Write a file to disk.",
    arguments=ARGS,
    arguments_json=json.dumps(ARGS, indent=2),
    cost_line="Costs about 20 credits.",
    spend_line="This chat has used about 40 credits on 'files' (limit 100).",
    reason="not marked read-only",
)

SPEND = SpendApprovalRequest(
    server="images",
    tool="render",
    qualified_name="images__render",
    arguments_json='{\n  "prompt": "a cat"\n}',
    cost_line="Costs about 50 credits.",
    spend_line="This chat has used about 80 credits on 'images' (limit 100).",
    limit_line="This call would take the chat past the limit of 100 credits on 'images'.",
)


@pytest.fixture
async def prompter() -> QtPrompter:
    p = QtPrompter()
    assert isinstance(p, Prompter)
    return p


def ask(runtime: RuntimeThread, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
    """Ask on the runtime thread, as the core does; the answer lands on the GUI loop."""
    return runtime.submit(coro)


async def shown(prompter: QtPrompter, cls: type[PromptDialog]) -> Any:
    dialog = await until(lambda: prompter.current, what="a dialog")
    assert isinstance(dialog, cls)
    assert dialog.isVisible()
    await until(dialog.isActiveWindow, timeout=3, what="the dialog to be active")
    return dialog


# --- trust ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (Qt.Key.Key_O, TrustChoice.ONCE),
        (Qt.Key.Key_P, TrustChoice.TRUST),
        (Qt.Key.Key_R, TrustChoice.REJECT),
    ],
)
async def test_trust_keys(
    runtime: RuntimeThread, prompter: QtPrompter, key: Qt.Key, expected: TrustChoice
) -> None:
    from portico.ui.dialogs.trust_dialog import TrustDialog

    answer = ask(runtime, prompter.review_trust(TRUST))
    dialog = await shown(prompter, TrustDialog)
    assert "github" in dialog.windowTitle()
    assert dialog.target.text() == TRUST.target
    assert "GITHUB_TOKEN" in [w.text() for w in dialog.findChildren(type(dialog.target))][
        -1
    ] or any("GITHUB_TOKEN" in w.text() for w in dialog.findChildren(type(dialog.target)))
    assert "never been trusted" in dialog.reasons.text()
    QTest.keyClick(dialog, key)
    assert await asyncio.wait_for(answer, 5) is expected
    assert gone(dialog)


async def test_trust_buttons_and_close_declines(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.trust_dialog import TrustDialog

    answer = ask(runtime, prompter.review_trust(TRUST))
    dialog = await shown(prompter, TrustDialog)
    dialog.reject_button.click()
    assert await asyncio.wait_for(answer, 5) is TrustChoice.REJECT

    answer = ask(runtime, prompter.review_trust(TRUST))
    dialog = await shown(prompter, TrustDialog)
    QTest.keyClick(dialog, Qt.Key.Key_Return)  # Enter decides nothing
    # Key handling answers synchronously, so the dialog says at once if it answered.
    assert not dialog.is_answered and dialog.isVisible()
    dialog.close()  # the window's close button: nothing decided
    assert await asyncio.wait_for(answer, 5) is TrustChoice.DECLINE


async def test_trust_cannot_persist_disables_trust(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from dataclasses import replace

    from portico.ui.dialogs.trust_dialog import TrustDialog

    answer = ask(runtime, prompter.review_trust(replace(TRUST, can_persist=False)))
    dialog = await shown(prompter, TrustDialog)
    assert not dialog.trust_button.isEnabled()
    QTest.keyClick(dialog, Qt.Key.Key_P)
    # Key handling answers synchronously, so the dialog says at once if it answered.
    assert not dialog.is_answered and dialog.isVisible()
    QTest.keyClick(dialog, Qt.Key.Key_O)
    assert await asyncio.wait_for(answer, 5) is TrustChoice.ONCE


async def test_trust_dialog_shows_each_secret_the_trust_level_and_costs(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from dataclasses import replace

    from portico.ui.dialogs.trust_dialog import TrustDialog

    request = replace(
        TRUST,
        secrets=(
            "header X-Api-Key \u2190 keyring secret GITHUB_PAT",
            "env AWS_KEY \u2190 your environment variable AWS_SECRET_ACCESS_KEY",
        ),
        trust_level="full",
        costs=("spend limit: 5 credits per chat", "tool write_note: 3 credits"),
    )
    answer = ask(runtime, prompter.review_trust(request))
    dialog = await shown(prompter, TrustDialog)
    assert dialog.secrets.text().splitlines() == list(request.secrets)
    assert dialog.secrets.accessibleName() == "your secrets it would receive"
    assert dialog.trust_level.text().startswith("full (runs every tool")
    assert "tool write_note: 3 credits" in dialog.costs.text()
    dialog.close()
    assert await asyncio.wait_for(answer, 5) is TrustChoice.DECLINE


async def test_trust_dialog_shows_the_whole_launch_each_loosening_and_pinned_files(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from dataclasses import replace

    from portico.ui.dialogs.trust_dialog import TrustDialog

    cwd = "cwd: /home/me/work/" + "deep/" * 30 + "tools (in the project folder)"
    request = replace(
        TRUST,
        launch=(
            "command: npx",
            "argument 1: -y",
            cwd,
            "env NODE_OPTIONS = --require ./.portico/telemetry.js",
        ),
        loosenings=(
            "trust full: calls run without asking (turns approvals off for this server)",
            "lets it use your model for sampling up to 1,000 a minute",
        ),
        pinned_files=(".portico/telemetry.js (23 bytes, sha256 ab12…)",),
    )
    answer = ask(runtime, prompter.review_trust(request))
    dialog = await shown(prompter, TrustDialog)
    assert dialog.launch.text().splitlines() == list(request.launch)  # every line, whole
    assert dialog.launch.wordWrap()
    assert cwd in dialog.launch.text()
    shown_text = dialog.loosenings.text()
    assert "This server would:" in shown_text
    assert all(f"<li>{line}</li>" in shown_text for line in request.loosenings)
    assert ".portico/telemetry.js" in dialog.pinned.text()
    dialog.close()
    assert await asyncio.wait_for(answer, 5) is TrustChoice.DECLINE


# --- tool approval and spend ------------------------------------------------------------------


async def test_approval_shows_everything_and_enter_never_allows(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.approval_dialog import ApprovalDialog

    answer = ask(runtime, prompter.approve_tool(APPROVAL))
    dialog = await shown(prompter, ApprovalDialog)
    assert json.loads(dialog.arguments_view.toPlainText()) == ARGS
    assert dialog.arguments_view.isReadOnly()
    assert dialog.cost_label.text() == APPROVAL.cost_line
    assert dialog.spend_label.text() == APPROVAL.spend_line
    assert set(dialog.choice_buttons) == set(ApprovalChoice)
    assert not any(b.isDefault() for c, b in dialog.choice_buttons.items() if c != "deny")
    assert dialog.focusWidget() is dialog.deny_button
    QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
    QTest.keyClick(dialog, Qt.Key.Key_Enter)
    # Key handling answers synchronously, so the dialog says at once if it answered.
    assert not dialog.is_answered and dialog.isVisible()  # Enter answers nothing, not even Deny
    QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Space)  # Space presses the focused Deny
    assert await asyncio.wait_for(answer, 5) == ApprovalAnswer(ApprovalChoice.DENY)


async def test_approval_enter_on_an_allow_button_does_nothing(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.approval_dialog import ApprovalDialog

    answer = ask(runtime, prompter.approve_tool(APPROVAL))
    dialog = await shown(prompter, ApprovalDialog)
    once = dialog.choice_buttons[ApprovalChoice.ONCE]
    once.setFocus()
    QTest.keyClick(once, Qt.Key.Key_Return)
    QTest.keyClick(dialog, Qt.Key.Key_Enter)
    # Key handling answers synchronously, so the dialog says at once if it answered.
    assert not dialog.is_answered and dialog.isVisible()
    once.click()
    assert await asyncio.wait_for(answer, 5) == ApprovalAnswer(ApprovalChoice.ONCE)


async def test_approval_session_with_any_arguments(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.approval_dialog import ApprovalDialog

    answer = ask(runtime, prompter.approve_tool(APPROVAL))
    dialog = await shown(prompter, ApprovalDialog)
    assert dialog.any_arguments is not None
    dialog.any_arguments.setChecked(True)
    dialog.choice_buttons[ApprovalChoice.SESSION].click()
    assert await asyncio.wait_for(answer, 5) == ApprovalAnswer(ApprovalChoice.SESSION, True)


async def test_approval_offers_only_the_allowed_choices(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from dataclasses import replace

    from portico.ui.dialogs.approval_dialog import ApprovalDialog

    request = replace(
        APPROVAL,
        choices=(ApprovalChoice.ONCE, ApprovalChoice.DENY),
        cost_line=None,
        spend_line=None,
    )
    answer = ask(runtime, prompter.approve_tool(request))
    dialog = await shown(prompter, ApprovalDialog)
    assert list(dialog.choice_buttons) == [ApprovalChoice.ONCE, ApprovalChoice.DENY]
    assert dialog.any_arguments is None  # nothing to widen
    assert not dialog.cost_label.isVisible()
    dialog.choice_buttons[ApprovalChoice.ONCE].click()
    assert await asyncio.wait_for(answer, 5) == ApprovalAnswer(ApprovalChoice.ONCE, False)


async def test_approval_for_a_client_names_the_client(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    """A call another MCP client makes through the endpoint says which client asks; a
    chat's call says nothing of clients."""
    from dataclasses import replace

    from portico.ui.dialogs.approval_dialog import ApprovalDialog, SpendDialog

    request = replace(APPROVAL, caller=Caller("client", "claude-code"))
    answer = ask(runtime, prompter.approve_tool(request))
    dialog = await shown(prompter, ApprovalDialog)
    assert dialog.client_label.isVisible()
    assert "'claude-code'" in dialog.client_label.text()
    assert "local endpoint" in dialog.client_label.text()
    dialog.choice_buttons[ApprovalChoice.ONCE].click()
    assert await asyncio.wait_for(answer, 5) == ApprovalAnswer(ApprovalChoice.ONCE)

    spend = replace(SPEND, caller=Caller("client", "cursor"))
    answer = ask(runtime, prompter.approve_spend(spend))
    dialog = await shown(prompter, SpendDialog)
    assert dialog.client_label.isVisible()
    assert "'cursor'" in dialog.client_label.text()
    dialog.deny_button.click()
    assert await asyncio.wait_for(answer, 5) is ApprovalChoice.DENY

    chat = replace(APPROVAL, caller=Caller("chat", "3f2a0000"))
    answer = ask(runtime, prompter.approve_tool(chat))
    dialog = await shown(prompter, ApprovalDialog)
    assert not dialog.client_label.isVisible()
    assert dialog.client_label.text() == ""
    dialog.deny_button.click()
    await asyncio.wait_for(answer, 5)


async def test_spend_dialog_allow_once_or_deny(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.approval_dialog import SpendDialog

    answer = ask(runtime, prompter.approve_spend(SPEND))
    dialog = await shown(prompter, SpendDialog)
    assert list(dialog.choice_buttons) == [ApprovalChoice.ONCE, ApprovalChoice.DENY]
    assert dialog.limit_label.text() == SPEND.limit_line
    assert dialog.focusWidget() is dialog.deny_button
    QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
    # Key handling answers synchronously, so the dialog says at once if it answered.
    assert not dialog.is_answered and dialog.isVisible()
    QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Space)
    assert await asyncio.wait_for(answer, 5) is ApprovalChoice.DENY

    answer = ask(runtime, prompter.approve_spend(SPEND))
    dialog = await shown(prompter, SpendDialog)
    dialog.choice_buttons[ApprovalChoice.ONCE].click()
    assert await asyncio.wait_for(answer, 5) is ApprovalChoice.ONCE


# --- OAuth and device code ----------------------------------------------------------------------


def _check_paste(text: str) -> str | None:
    if "code=" not in text:
        return "no code= in the pasted text"
    if "state=s3cret" not in text:
        return "state does not match this login"
    return None


AUTH = AuthorizeRequest(
    server="linear",
    authorize_url="https://auth.example.com/authorize?client_id=abc&state=s3cret",
    redirect_uri="http://127.0.0.1:33418/mcp/oauth/callback",
    timeout=300,
    browser_opened=False,
    check_paste=_check_paste,
)


async def test_oauth_paste_feedback_and_continue(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.oauth_dialog import OAuthDialog

    answer = ask(runtime, prompter.authorize(AUTH))
    dialog = await shown(prompter, OAuthDialog)
    assert dialog.url_field.text() == AUTH.authorize_url
    assert dialog.url_field.isReadOnly()
    assert re.fullmatch(r"Waiting for the sign-in… [45]:\d\d left", dialog.countdown.text())
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == AUTH.authorize_url

    QTest.keyClicks(dialog.paste_field, "http://127.0.0.1/cb?nothing")
    assert "no code=" in dialog.feedback.text()
    assert not dialog.continue_button.isEnabled()
    dialog.paste_field.setText("?code=abc&state=wrong")
    assert "state does not match" in dialog.feedback.text()
    QTest.keyClick(dialog.paste_field, Qt.Key.Key_Return)
    # Key handling answers synchronously, so the dialog says at once if it answered.
    assert not dialog.is_answered and dialog.isVisible()
    dialog.paste_field.setText("?code=abc&state=s3cret")
    assert dialog.continue_button.isEnabled()
    QTest.keyClick(dialog.paste_field, Qt.Key.Key_Return)
    assert await asyncio.wait_for(answer, 5) == "?code=abc&state=s3cret"


async def test_oauth_cancel_and_reauth_wording(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from dataclasses import replace

    from portico.ui.dialogs.oauth_dialog import OAuthDialog

    answer = ask(runtime, prompter.authorize(replace(AUTH, reauth=True)))
    dialog = await shown(prompter, OAuthDialog)
    assert dialog.intro.text().startswith("linear needs you to sign in again.")
    dialog.cancel_button.click()
    assert await asyncio.wait_for(answer, 5) is None


async def test_oauth_aborted_when_loopback_wins(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.oauth_dialog import OAuthDialog

    answer = ask(runtime, prompter.authorize(AUTH))
    dialog = await shown(prompter, OAuthDialog)
    answer.cancel()  # the core cancels: the redirect reached the loopback listener
    await until(lambda: gone(dialog), what="the dialog to close")
    await until(lambda: prompter.current is None, what="the prompter to be free")
    assert answer.cancelled()


async def test_device_code_shows_code_and_cancel_returns(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.device_dialog import DeviceDialog

    request = DeviceCodeRequest(
        server="box",
        verification_uri="https://example.com/device",
        user_code="WDJB-MJHT",
        verification_uri_complete=None,
        expires_in=900,
        interval=5,
    )
    answer = ask(runtime, prompter.device_code(request))
    dialog = await shown(prompter, DeviceDialog)
    assert dialog.code_label.text() == "WDJB-MJHT"
    assert dialog.code_label.font().pointSizeF() > dialog.font().pointSizeF() * 2
    assert "every 5 s" in dialog.state_label.text()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == "WDJB-MJHT"
    dialog.cancel_button.click()
    assert await asyncio.wait_for(answer, 5) is None


# --- elicitation and sampling ---------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "Full name"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "default": 2.5},
        "subscribe": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
    },
    "required": ["name", "age"],
}


async def test_elicitation_form_from_schema(runtime: RuntimeThread, prompter: QtPrompter) -> None:
    from portico.ui.dialogs.elicitation_dialog import ElicitationDialog

    request = ElicitationRequest(server="forms", message="Tell us about you", schema=SCHEMA)
    answer = ask(runtime, prompter.elicit(request))
    dialog = await shown(prompter, ElicitationDialog)
    f = dialog.fields
    assert isinstance(f["name"].widget, QLineEdit) and f["name"].label == "Your name *"
    assert isinstance(f["age"].widget, QSpinBox) and f["age"].label == "age *"
    assert isinstance(f["score"].widget, QDoubleSpinBox) and f["score"].widget.value() == 2.5
    assert isinstance(f["subscribe"].widget, QCheckBox) and f["subscribe"].widget.isChecked()
    assert isinstance(f["color"].widget, QComboBox)
    assert f["color"].widget.currentText() == "green"
    assert isinstance(f["size"].widget, QComboBox) and f["size"].widget.currentText() == "—"

    dialog.accept_button.click()  # name missing: stays open with a message
    assert "Your name" in dialog.error_label.text()
    assert not answer.done()
    QTest.keyClicks(f["name"].widget, "Ada")
    f["age"].widget.setValue(36)
    f["size"].widget.setCurrentIndex(f["size"].widget.findText("Large"))
    dialog.accept_button.click()
    result = await asyncio.wait_for(answer, 5)
    assert result == ElicitationAnswer(
        "accept",
        {"name": "Ada", "age": 36, "score": 2.5, "subscribe": True, "color": "green", "size": "l"},
    )


async def test_elicitation_decline_cancel_and_url_mode(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.elicitation_dialog import ElicitationDialog

    request = ElicitationRequest(server="forms", message="Pick", schema=SCHEMA, error="bad age")
    answer = ask(runtime, prompter.elicit(request))
    dialog = await shown(prompter, ElicitationDialog)
    assert dialog.error_label.text() == "bad age"
    dialog.decline_button.click()
    assert await asyncio.wait_for(answer, 5) == ElicitationAnswer("decline")

    answer = ask(runtime, prompter.elicit(request))
    dialog = await shown(prompter, ElicitationDialog)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    assert await asyncio.wait_for(answer, 5) == ElicitationAnswer("cancel")

    url_request = ElicitationRequest(
        server="pay", message="Confirm the payment", mode="url", url="https://pay.example.com/x"
    )
    answer = ask(runtime, prompter.elicit(url_request))
    dialog = await shown(prompter, ElicitationDialog)
    assert dialog.url_label.text() == "https://<b>pay.example.com</b>/x"  # the host set apart
    dialog.accept_button.click()
    assert await asyncio.wait_for(answer, 5) == ElicitationAnswer("accept")


SAMPLING = SamplingRequest(
    server="research",
    messages=(
        SamplingMessage("user", "Summarize the attached notes."),
        SamplingMessage("assistant", "Sure, which part?"),
    ),
    system_prompt="You are terse.",
    requested_model="claude-x",
    model="gpt-test",
    max_tokens=512,
)


async def test_sampling_approve_and_deny(runtime: RuntimeThread, prompter: QtPrompter) -> None:
    from portico.ui.dialogs.sampling_dialog import SamplingDialog

    answer = ask(runtime, prompter.review_sampling(SAMPLING))
    dialog = await shown(prompter, SamplingDialog)
    assert "gpt-test" in dialog.model_label.text() and "claude-x" in dialog.model_label.text()
    assert dialog.max_tokens.value() == 512
    assert dialog.message_edits[0][1].toPlainText() == "Summarize the attached notes."
    assert all(edit.isReadOnly() for _, edit in dialog.message_edits)
    assert dialog.focusWidget() is dialog.deny_button
    QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Space)
    assert await asyncio.wait_for(answer, 5) == SamplingAnswer("deny")

    answer = ask(runtime, prompter.review_sampling(SAMPLING))
    dialog = await shown(prompter, SamplingDialog)
    dialog.approve_button.click()
    assert await asyncio.wait_for(answer, 5) == SamplingAnswer("approve")


async def test_sampling_edit_returns_edited_values(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.sampling_dialog import SamplingDialog

    answer = ask(runtime, prompter.review_sampling(SAMPLING))
    dialog = await shown(prompter, SamplingDialog)
    dialog.edit_button.click()
    assert not dialog.message_edits[0][1].isReadOnly()
    dialog.message_edits[0][1].setPlainText("Summarize only the first note.")
    dialog.max_tokens.setValue(100)
    assert dialog.system_edit is not None
    dialog.system_edit.setPlainText("Be brief.")
    dialog.approve_button.click()
    result = await asyncio.wait_for(answer, 5)
    assert result == SamplingAnswer(
        "approve",
        messages=(
            SamplingMessage("user", "Summarize only the first note."),
            SamplingMessage("assistant", "Sure, which part?"),
        ),
        system_prompt="Be brief.",
        max_tokens=100,
    )


# --- queueing, aborting, notices ----------------------------------------------------------------


async def test_questions_from_two_servers_queue(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from dataclasses import replace

    from portico.ui.dialogs.approval_dialog import ApprovalDialog
    from portico.ui.dialogs.trust_dialog import TrustDialog

    first = ask(runtime, prompter.review_trust(TRUST))
    dialog = await shown(prompter, TrustDialog)
    second = ask(runtime, prompter.approve_tool(replace(APPROVAL, server="files")))
    await until(lambda: prompter.waiting == 1, what="the second question to queue")
    await until(dialog.queue_label.isVisible, what="the waiting line")
    assert "1 more question waiting" in dialog.queue_label.text()
    assert len([w for w in _visible_dialogs()]) == 1  # one on screen at a time

    QTest.keyClick(dialog, Qt.Key.Key_O)
    assert await asyncio.wait_for(first, 5) is TrustChoice.ONCE
    dialog2 = await until(
        lambda: prompter.current if isinstance(prompter.current, ApprovalDialog) else None,
        what="the second dialog",
    )
    assert dialog2.server == "files" and "files" in dialog2.windowTitle()
    assert not dialog2.queue_label.isVisible()
    dialog2.deny_button.click()
    assert await asyncio.wait_for(second, 5) == ApprovalAnswer(ApprovalChoice.DENY)


async def test_aborted_questions_close_and_leave_the_queue(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.trust_dialog import TrustDialog

    first = ask(runtime, prompter.review_trust(TRUST))
    dialog = await shown(prompter, TrustDialog)
    queued = ask(runtime, prompter.approve_spend(SPEND))
    await until(lambda: prompter.waiting == 1, what="the queued question")
    queued.cancel()  # withdrawn while waiting: never shown
    await until(lambda: prompter.waiting == 0, what="the queue to empty")
    first.cancel()  # withdrawn while on screen: the dialog closes by itself
    await until(lambda: gone(dialog), what="the dialog to close")
    await until(lambda: prompter.current is None, what="the prompter to be free")
    assert _visible_dialogs() == []

    # The prompter still works afterwards.
    again = ask(runtime, prompter.review_trust(TRUST))
    dialog = await shown(prompter, TrustDialog)
    dialog.once_button.click()
    assert await asyncio.wait_for(again, 5) is TrustChoice.ONCE


async def test_notify_crosses_to_the_gui(runtime: RuntimeThread, prompter: QtPrompter) -> None:
    got: list[Notice] = []
    prompter.noticePosted.connect(got.append)
    notice = Notice("warning", "No secure keyring: tokens stay in memory.", server="linear")
    await ask(runtime, prompter.notify(notice))
    await until(lambda: got, what="the notice")
    assert got == [notice]


def _visible_dialogs() -> list[PromptDialog]:
    from PySide6.QtWidgets import QApplication

    return [
        w for w in QApplication.topLevelWidgets() if isinstance(w, PromptDialog) and w.isVisible()
    ]


async def test_elicitation_survives_odd_schemas(
    runtime: RuntimeThread, prompter: QtPrompter
) -> None:
    from portico.ui.dialogs.elicitation_dialog import ElicitationDialog

    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": -(10**12), "maximum": 10**12, "default": "x"},
            "ratio": {"type": "number", "maximum": True},
            "free": {},  # no type: a text field
            "bad": "not a property",
        },
        "required": ["count"],
    }
    answer = ask(runtime, prompter.elicit(ElicitationRequest("odd", "Odd form", schema=schema)))
    dialog = await shown(prompter, ElicitationDialog)
    assert set(dialog.fields) == {"count", "ratio", "free"}
    assert isinstance(dialog.fields["free"].widget, QLineEdit)
    dialog.fields["count"].widget.setValue(7)
    dialog.accept_button.click()
    assert await asyncio.wait_for(answer, 5) == ElicitationAnswer("accept", {"count": 7})
