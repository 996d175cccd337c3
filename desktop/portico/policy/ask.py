"""Ask a person one question through a Prompter, turning every non-answer into a decline.

A question can end without an answer in three ways: the Prompter refuses (nobody can
answer: :class:`portico.prompts.Refused`), it runs out of time, or it is aborted (the
Prompter's task was cancelled because the server went away or the dialog was closed).
All three resolve as *declined*; :class:`Outcome` keeps which one it was so the caller can
tell the model or the person why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Generic, TypeVar

from portico.prompts import EndedBy, Refused

T = TypeVar("T")

__all__ = ["EndedBy", "Outcome", "ask", "ask_outcome"]


@dataclass(frozen=True)
class Outcome(Generic[T]):
    answer: T | None  # None unless ended_by == "answered"
    ended_by: EndedBy = "answered"
    message: str = ""  # the refusal message, or a plain description of the timeout

    @property
    def answered(self) -> bool:
        return self.ended_by == "answered"


async def ask_outcome(
    question: Awaitable[T],
    timeout: float | None = None,  # noqa: ASYNC109 (a Prompter answer, not an I/O call)
) -> Outcome[T]:
    """Await ``question`` (a Prompter call) with an optional timeout in seconds.

    Cancelling the task that awaits this still cancels it (the caller is gone); a
    cancellation that comes from inside the Prompter (its dialog was torn down) is an
    abort and resolves as declined.
    """
    task = asyncio.ensure_future(question)
    try:
        if timeout is not None and timeout > 0:
            answer = await asyncio.wait_for(task, timeout)
        else:
            answer = await task
    except Refused as exc:
        return Outcome(None, "refused", str(exc))
    except TimeoutError:
        return Outcome(None, "timeout", f"no answer within {_seconds(timeout)}")
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
        return Outcome(None, "aborted", "the question was closed without an answer")
    finally:
        if not task.done():
            task.cancel()
    return Outcome(answer, "answered")


async def ask(
    question: Awaitable[T],
    timeout: float | None = None,  # noqa: ASYNC109
    *,
    declined: T,
) -> T:
    """Like :func:`ask_outcome` but returns ``declined`` for any non-answer."""
    outcome = await ask_outcome(question, timeout)
    return outcome.answer if outcome.answered else declined  # type: ignore[return-value]


def _seconds(timeout: float | None) -> str:
    if timeout is None:
        return "the time limit"
    value = f"{timeout:g}"
    return f"{value} second" if value == "1" else f"{value} seconds"
