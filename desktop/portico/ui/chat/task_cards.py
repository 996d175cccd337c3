"""A tool card's task line (tasks extension): the live status of a call the server
answered with a task, and for a stored one (Portico closed while it ran) the last status
seen with Fetch result."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from portico.chat.events import ToolCallTask
from portico.chat.task_store import ChatTask
from portico.runtime.task_events import STATUS_WORDS
from portico.ui.chat.tool_card import ToolCard

Fetch = Callable[[str], None]  # call id

NOT_FETCHABLE = frozenset({"cancelled", "expired", "failed"})


def task_text(status: str, message: str | None, task_id: str) -> str:
    """ "Task working… — step 2 of 5 (task 3f9a2c1d)"."""
    word = STATUS_WORDS.get(status, status)
    detail = f" — {message}" if message else ""
    return f"Task {word}{detail} (task {task_id[:8]})"


def show_live(card: ToolCard, event: ToolCallTask) -> None:
    card.show_task(task_text(event.status, event.message, event.task_id))


def show_stored(cards: Mapping[str, ToolCard], tasks: Mapping[str, ChatTask], fetch: Fetch) -> None:
    for call_id, task in tasks.items():
        card = cards.get(call_id)
        if card is None:
            continue
        wire(card, fetch)
        done = card.state.outcome == "ok"
        text = task_text(task.status, task.message, task.task_id)
        if not done and task.status not in NOT_FETCHABLE:
            text += " — Portico was closed while it ran"
        card.show_task(text, fetchable=not done and task.status not in NOT_FETCHABLE)


def wire(card: ToolCard, fetch: Fetch) -> None:
    if not card.property("task_wired"):
        card.setProperty("task_wired", True)
        card.fetchRequested.connect(fetch)
