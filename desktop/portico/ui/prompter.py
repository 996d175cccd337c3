"""QtPrompter: the core's questions, answered with non-modal dialogs on the GUI thread.

The core calls these methods on the runtime loop. Each call hops to the GUI loop,
waits its turn in one FIFO queue (questions from several servers never pile up on
screen; each dialog names its server and how many wait behind it), shows a dialog and
returns its answer. Cancelling the awaiting task (the core withdrew the question)
cancels the GUI side, which closes the dialog by itself.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    AuthorizeRequest,
    DeviceCodeRequest,
    ElicitationAnswer,
    ElicitationRequest,
    Notice,
    SamplingAnswer,
    SamplingRequest,
    SpendApprovalRequest,
    ToolApprovalRequest,
    TrustChoice,
    TrustRequest,
    UnsandboxedRequest,
)
from portico.ui.dialogs.approval_dialog import ApprovalDialog, SpendDialog
from portico.ui.dialogs.base import PromptDialog
from portico.ui.dialogs.device_dialog import DeviceDialog
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.dialogs.oauth_dialog import OAuthDialog
from portico.ui.dialogs.sampling_dialog import SamplingDialog
from portico.ui.dialogs.trust_dialog import TrustDialog
from portico.ui.dialogs.unsandboxed_dialog import UnsandboxedDialog

T = TypeVar("T")


class QtPrompter(QObject):
    """Implements ``portico.prompts.Prompter``. Create it on the GUI thread, inside its loop."""

    dialogShown = Signal(object)  # PromptDialog, when it appears
    dialogClosed = Signal(object)  # PromptDialog, answered or aborted
    noticePosted = Signal(object)  # Notice

    def __init__(
        self,
        parent_widget: Callable[[], QWidget | None] | None = None,
        gui_loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__()
        self._gui_loop = gui_loop or asyncio.get_running_loop()
        self._gui_thread = threading.current_thread()
        self._parent_widget = parent_widget or (lambda: None)
        self._turn = asyncio.Lock()
        self._waiting = 0
        self.current: PromptDialog | None = None

    # --- the Prompter protocol ------------------------------------------------------------

    async def review_trust(self, request: TrustRequest) -> TrustChoice:
        return await self._ask(lambda p: TrustDialog(request, p))

    async def approve_tool(self, request: ToolApprovalRequest) -> ApprovalAnswer:
        return await self._ask(lambda p: ApprovalDialog(request, p))

    async def approve_spend(self, request: SpendApprovalRequest) -> ApprovalChoice:
        return await self._ask(lambda p: SpendDialog(request, p))

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        return await self._ask(lambda p: OAuthDialog(request, p))

    async def run_unsandboxed(self, request: UnsandboxedRequest) -> bool:
        return bool(await self._ask(lambda p: UnsandboxedDialog(request, p)))

    async def device_code(self, request: DeviceCodeRequest) -> None:
        await self._ask(lambda p: self._device_dialog(request, p))

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return await self._ask(lambda p: ElicitationDialog(request, p))

    async def review_sampling(self, request: SamplingRequest) -> SamplingAnswer:
        return await self._ask(lambda p: SamplingDialog(request, p))

    async def notify(self, notice: Notice) -> None:
        if self._on_gui_loop():
            self.noticePosted.emit(notice)
        else:
            self._gui_loop.call_soon_threadsafe(self.noticePosted.emit, notice)

    def _device_dialog(self, request: DeviceCodeRequest, parent: QWidget | None) -> DeviceDialog:
        """The dialog follows the core's poll states; they arrive on the runtime thread."""
        dialog = DeviceDialog(request, parent)
        loop = self._gui_loop
        # Only a weak reference may reach the runtime thread: if that thread dropped the
        # last strong one, it would destroy the dialog there (and its timers with it).
        ref = weakref.ref(dialog)

        def deliver(text: str) -> None:  # on the GUI loop
            shown = ref()
            if shown is not None and shiboken6.isValid(shown) and not shown.is_answered:
                shown.set_status(text)

        def forward(text: str) -> None:  # on the runtime thread
            loop.call_soon_threadsafe(deliver, text)

        stop = request.status.watch(forward)
        dialog.finished.connect(lambda _result: stop())
        dialog.destroyed.connect(lambda *_: stop())
        return dialog

    # --- crossing to the GUI ----------------------------------------------------------------

    @property
    def waiting(self) -> int:
        """Questions queued behind the one on screen."""
        return self._waiting

    def _on_gui_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._gui_loop
        except RuntimeError:
            return False

    async def _ask(self, build: Callable[[QWidget | None], PromptDialog]) -> Any:
        if self._on_gui_loop():
            return await self._show(build)
        future = asyncio.run_coroutine_threadsafe(self._show(build), self._gui_loop)
        # Cancelling this await cancels the GUI task too (wrap_future chains both ways).
        return await asyncio.wrap_future(future)

    async def _show(self, build: Callable[[QWidget | None], PromptDialog]) -> Any:
        self._waiting += 1
        self._refresh_waiting()
        try:
            await self._turn.acquire()
        finally:
            self._waiting -= 1
        try:
            dialog = build(self._parent_widget())
            answered: asyncio.Future[Any] = self._gui_loop.create_future()

            def _on_answer(value: Any) -> None:
                if not answered.done():
                    answered.set_result(value)

            dialog.answered.connect(_on_answer)
            self.current = dialog
            self._refresh_waiting()
            dialog.show()
            dialog.raise_()
            dialog.activateWindow()
            self.dialogShown.emit(dialog)
            try:
                return await answered
            finally:
                if not dialog.is_answered:
                    dialog.abort()
                self.current = None
                self.dialogClosed.emit(dialog)
                dialog.deleteLater()
        finally:
            self._turn.release()

    def _refresh_waiting(self) -> None:
        if self.current is not None:
            self.current.set_waiting(self._waiting)
