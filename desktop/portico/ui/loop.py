"""The GUI thread's asyncio loop: qasync's QEventLoop with asyncio's async-generator hooks.

qasync runs ``app.exec()`` without installing the hooks that asyncio's own loops install,
so async generators (httpx2 streams, anyio cancel scopes) were finalized on the wrong task
("Attempted to exit a cancel scope that isn't the current task's", shared/PLATFORM.md).
"""

from __future__ import annotations

import sys
from typing import Any

import qasync
from PySide6.QtWidgets import QApplication


class PorticoEventLoop(qasync.QEventLoop):  # type: ignore[misc, name-defined]
    """Use with ``asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app))``."""

    def __init__(self, app: QApplication | None = None) -> None:
        super().__init__(app or QApplication.instance())

    def run_forever(self) -> Any:
        old_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*old_hooks)


def ensure_application(argv: list[str] | None = None) -> QApplication:
    """The process's QApplication, created on first use."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    return app
