"""The modules the window does not need for its first paint, imported right after it:
the Chats place and the first-run flows (markdown-it, Pygments, the chat widgets, the
chat core, the onboarding dialogs and the config editing they write through), the
Servers place's tabs, and the prompter's dialogs. About 1 s of imports on 2 cores.

``import_after_paint`` runs in a worker thread (``DesktopApp.build_after_paint``):
importing only defines classes, no widget is made, and the GUI thread keeps handling
input and paints meanwhile; the widgets are then built on the GUI thread.
"""

from __future__ import annotations

import importlib

AFTER_PAINT_MODULES = (
    "portico.ui.prompter",
    "portico.ui.pages.controller",
    "portico.ui.chat.controller",
    "portico.ui.chat.pane",
    "portico.ui.onboarding.controller",
)


def import_after_paint() -> None:
    for name in AFTER_PAINT_MODULES:
        importlib.import_module(name)
    from portico.policy.url_review import warm

    warm()  # the suffix list and Unicode tables every URL a dialog shows is checked with
