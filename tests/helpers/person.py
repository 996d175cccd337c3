"""A scripted person: a Prompter that answers from a script and records every question."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from portico.prompts import Notice, Refused

HANG = object()  # a scripted answer: never answer (the question times out or is aborted)


class ScriptedPerson:
    """A test double of the *person*: records every question, answers from a script.

    ``script[method]`` is a list of answers used in order; an answer may be a value, an
    exception instance (raised), a callable (called with the request) or ``HANG``.
    A question without a scripted answer fails the test loudly.
    """

    def __init__(self, **script: list[Any]) -> None:
        self.script: dict[str, deque[Any]] = {k: deque(v) for k, v in script.items()}
        self.asked: list[tuple[str, Any]] = []
        self.notices: list[Notice] = []

    def add(self, method: str, *answers: Any) -> None:
        self.script.setdefault(method, deque()).extend(answers)

    def requests(self, method: str) -> list[Any]:
        return [r for m, r in self.asked if m == method]

    async def _answer(self, method: str, request: Any) -> Any:
        self.asked.append((method, request))
        queue = self.script.get(method)
        if not queue:
            raise AssertionError(f"unexpected question {method}: {request!r}")
        answer = queue.popleft()
        if answer is HANG:
            await asyncio.Event().wait()
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(request)
        return answer

    async def review_trust(self, request: Any) -> Any:
        return await self._answer("review_trust", request)

    async def approve_tool(self, request: Any) -> Any:
        return await self._answer("approve_tool", request)

    async def approve_spend(self, request: Any) -> Any:
        return await self._answer("approve_spend", request)

    async def authorize(self, request: Any) -> Any:
        return await self._answer("authorize", request)

    async def device_code(self, request: Any) -> Any:
        return await self._answer("device_code", request)

    async def elicit(self, request: Any) -> Any:
        return await self._answer("elicit", request)

    async def review_sampling(self, request: Any) -> Any:
        return await self._answer("review_sampling", request)

    async def run_unsandboxed(self, request: Any) -> Any:
        return await self._answer("run_unsandboxed", request)

    def agrees_unsandboxed(self, times: int = 8) -> None:
        """Say yes when asked to run a sandboxed server without one. Only a machine that
        cannot sandbox (no user namespaces, as on some CI machines) asks; elsewhere these
        answers stay unused."""
        self.add("run_unsandboxed", *([True] * times))

    async def notify(self, notice: Notice) -> None:
        self.notices.append(notice)


def refused(text: str = "nobody here") -> Refused:
    return Refused(text)


async def eventually(check: Callable[[], bool], within: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)
