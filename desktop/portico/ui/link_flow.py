"""Open a ``portico://add`` link in the running app: validate it, show exactly what would
be written, write only after the person confirms, then reload the config.

Bad links never reach a dialog that could add them: they become one error notice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from portico.prompts import Notice
from portico.ui.ops import Ops

if TYPE_CHECKING:  # the config layer loads after the window is up (cold start)
    from portico.config.deeplink import AddRequest, Prepared

log = logging.getLogger(__name__)


class LinkFlow(QObject):
    dialogShown = Signal(object)  # the DeepLinkDialog
    finished = Signal(str)  # "added" | "cancelled" | "refused" | "failed"

    def __init__(
        self,
        parent_widget: Callable[[], QWidget | None],
        notify: Callable[[Notice], None],
        reload: Callable[[], Awaitable[None]],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._parent_widget = parent_widget
        self._notify = notify
        self._reload = reload
        self.dialogs: list[Any] = []  # the DeepLinkDialogs on screen
        self.ops = Ops(notify)

    def open(self, link: str) -> None:
        self.ops.spawn(self.run(link), "Opening the portico:// link")

    async def run(self, link: str) -> str:
        from portico.config.deeplink import DeepLinkError, parse_add_link, prepare
        from portico.policy.link_review import LinkReview, review_link
        from portico.ui.dialogs.deeplink_dialog import DeepLinkDialog

        def prepared_and_reviewed(request: AddRequest) -> tuple[Prepared, LinkReview]:
            prepared = prepare(request)  # reads the file and the suffix list: off the GUI
            return prepared, review_link(prepared)

        try:
            request = parse_add_link(link)
            prepared, review = await asyncio.to_thread(prepared_and_reviewed, request)
        except DeepLinkError as exc:
            self._notify(Notice("error", f"The portico:// link was not opened: {exc}."))
            return self._end("refused")
        dialog = DeepLinkDialog(prepared, self._parent_widget(), review)
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def settle(value: object) -> None:
            if not answer.done():
                answer.set_result(bool(value))

        dialog.answered.connect(settle)
        self.dialogs.append(dialog)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        self.dialogShown.emit(dialog)
        try:
            confirmed = await answer
        finally:
            self.dialogs.remove(dialog)
            dialog.deleteLater()
        if not confirmed:
            return self._end("cancelled")
        return self._end(await self._write(prepared))

    async def _write(self, prepared: Prepared) -> str:
        from portico.config.atomic import ConflictError

        name = prepared.request.name
        try:
            await asyncio.to_thread(prepared.write)
        except (ConflictError, OSError) as exc:
            self._notify(Notice("error", f"{name} was not added: {exc}", server=name))
            return "failed"
        self._notify(Notice("info", f"Added {name} to {prepared.path}.", server=name))
        try:
            await self._reload()
        except Exception:  # the notice above stands; the reload reports its own errors
            log.exception("reloading after adding %s failed", name)
        return "added"

    def _end(self, outcome: str) -> str:
        self.finished.emit(outcome)
        return outcome

    def close(self) -> None:
        for dialog in list(self.dialogs):
            dialog.abort()
        self.ops.cancel_all()
