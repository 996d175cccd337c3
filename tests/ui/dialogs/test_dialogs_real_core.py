"""The Qt dialogs asked by the REAL core: a real server's elicitation through the
ElicitationPolicy, a real sampling request through the SamplingPolicy (scripted model
provider), a costed call over the spend limit through the ToolGuard. The hub and policy run
on the runtime thread as in the app; the test clicks the dialog's buttons and checks what
the core did (the server's received answer, the model call made or not, the call run or
not)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QSpinBox

from portico.config.model import ToolCost
from portico.policy.guard import ChatContext, ToolGuard
from portico.policy.setup import Policy
from portico.prompts import ApprovalChoice
from portico.runtime.hub import Hub
from portico.ui.dialogs.approval_dialog import SpendDialog
from portico.ui.dialogs.base import PromptDialog
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.dialogs.sampling_dialog import SamplingDialog
from portico.ui.facade import RuntimeThread
from portico.ui.prompter import QtPrompter
from portico.ui.schema_form import ChoiceList
from tests.helpers.models import ScriptedModel
from tests.helpers.specs import asker_spec, config_of
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # talks to real servers or processes


@dataclass
class Core:
    runtime: RuntimeThread
    prompter: QtPrompter
    model: ScriptedModel
    hub: Hub
    guard: ToolGuard
    chat: ChatContext

    def call(self, tool: str, args: dict[str, Any]) -> asyncio.Future[Any]:
        """A plain hub call (elicitation / sampling happen inside it)."""
        return self.runtime.submit(self.hub.registry.call(f"asker__{tool}", args))

    def guarded(self, tool: str, args: dict[str, Any]) -> asyncio.Future[Any]:
        """A call through the ToolGuard, as a chat makes it."""
        return self.runtime.submit(self.guard.call(self.chat, f"asker__{tool}", args))

    async def runs(self) -> int:
        return int((await self.call("count", {})).text())


@pytest.fixture
async def core(runtime: RuntimeThread) -> AsyncIterator[Core]:
    prompter = QtPrompter()
    model = ScriptedModel()
    spec = asker_spec("asker", tool_costs=(("render", ToolCost(20, 20)),), spend_limit=10)

    async def build() -> tuple[Hub, ToolGuard]:
        policy = Policy(prompter, provider=model)
        hub = Hub(hooks=policy.hooks())
        await hub.apply(config_of(spec))
        return hub, policy.guard(hub.registry)

    hub, guard = await runtime.submit(build())
    yield Core(runtime, prompter, model, hub, guard, ChatContext())
    await runtime.submit(hub.close())


async def dialog_of(core: Core, cls: type[PromptDialog]) -> Any:
    dialog = await until(lambda: core.prompter.current, 30, f"the {cls.__name__}")
    assert isinstance(dialog, cls) and dialog.server == "asker"
    assert dialog.isVisible()
    return dialog


async def test_elicitation_dialog_answers_the_real_server(core: Core) -> None:
    answer = core.call("form", {})
    dialog = await dialog_of(core, ElicitationDialog)
    assert dialog.message.text() == "Tell me about you"
    assert dialog.fields["name"].widget.text() == "Ada"  # the schema's default, filled in
    age = dialog.fields["age"].widget
    assert isinstance(age, QSpinBox)
    age.setValue(36)
    dialog.accept_button.click()
    got = json.loads((await asyncio.wait_for(answer, 30)).text())
    assert got == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "color": "blue", "subscribe": False},
    }
    await until(lambda: gone(dialog), 10, "the dialog to close")

    answer = core.call("form", {})
    dialog = await dialog_of(core, ElicitationDialog)
    dialog.decline_button.click()
    got = json.loads((await asyncio.wait_for(answer, 30)).text())
    assert got == {"action": "decline", "content": None}


async def test_multi_select_fields_are_check_boxes_and_answer_lists(core: Core) -> None:
    answer = core.call("multi", {})
    dialog = await dialog_of(core, ElicitationDialog)
    toppings, sizes = dialog.fields["toppings"].widget, dialog.fields["sizes"].widget
    assert isinstance(toppings, ChoiceList) and isinstance(sizes, ChoiceList)
    assert [b.text() for _, b in toppings.boxes] == ["cheese", "ham", "olives"]
    assert [b.text() for _, b in sizes.boxes] == ["Small", "Medium", "Large"]  # the titles
    assert toppings.chosen() == ["cheese"] and sizes.chosen() == ["m"]  # defaults filled in
    QTest.mouseClick(toppings.box("ham"), Qt.MouseButton.LeftButton)
    QTest.mouseClick(toppings.box("olives"), Qt.MouseButton.LeftButton)
    assert toppings.chosen() == ["cheese", "ham", "olives"]
    dialog.accept_button.click()  # three toppings: over maxItems 2, the dialog says so
    assert dialog.error_label.isVisible()
    assert dialog.error_label.text() == "Toppings: choose at most 2"
    QTest.mouseClick(toppings.box("cheese"), Qt.MouseButton.LeftButton)
    QTest.mouseClick(sizes.box("Large"), Qt.MouseButton.LeftButton)
    dialog.accept_button.click()
    got = json.loads((await asyncio.wait_for(answer, 30)).text())
    assert got == {
        "action": "accept",
        "content": {"toppings": ["ham", "olives"], "sizes": ["m", "l"]},
    }


async def test_sampling_dialog_gates_the_model_call(core: Core) -> None:
    answer = core.call("sample", {"prompt": "hello", "max_tokens": 50, "system": "be brief"})
    dialog = await dialog_of(core, SamplingDialog)
    assert dialog.message_edits[0][1].toPlainText() == "hello"
    assert dialog.max_tokens.value() == 50
    dialog.deny_button.click()
    denied = json.loads((await asyncio.wait_for(answer, 30)).text())
    assert "declined" in denied["error"]
    assert core.model.calls == []  # denied: the model was never called

    answer = core.call("sample", {"prompt": "hello", "max_tokens": 50})
    dialog = await dialog_of(core, SamplingDialog)
    dialog.edit_button.click()
    dialog.message_edits[0][1].setPlainText("hello, edited")
    dialog.approve_button.click()
    approved = json.loads((await asyncio.wait_for(answer, 30)).text())
    assert approved["text"] == "answer to hello, edited"
    [(messages, _system, _model, max_tokens)] = core.model.calls
    assert messages[-1].text == "hello, edited" and max_tokens == 50


async def test_spend_dialog_decides_whether_the_costed_call_runs(core: Core) -> None:
    assert await core.runs() == 0
    result = core.guarded("render", {"prompt": "cat"})
    dialog = await dialog_of(core, SpendDialog)
    assert list(dialog.choice_buttons) == [ApprovalChoice.ONCE, ApprovalChoice.DENY]
    assert "limit of 10 credits" in dialog.limit_label.text()
    dialog.deny_button.click()
    denied = await asyncio.wait_for(result, 30)
    assert denied.is_error
    assert await core.runs() == 0  # the server never ran it
    assert core.chat.spend.total("asker") == 0

    result = core.guarded("render", {"prompt": "cat"})
    dialog = await dialog_of(core, SpendDialog)
    dialog.choice_buttons[ApprovalChoice.ONCE].click()
    ran = await asyncio.wait_for(result, 30)
    assert ran.text() == "rendered cat"
    assert await core.runs() == 1
    assert core.chat.spend.total("asker") == 20
