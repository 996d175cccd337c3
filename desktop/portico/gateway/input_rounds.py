"""A 2026-07-28 client's call held across its retries, so a backend can ask it something.

A 2026-07-28 request has no back-channel: a server that needs input answers the call
with an ``InputRequiredResult`` (``input_requests`` + an opaque ``request_state``) and
the client retries the same ``tools/call`` with ``input_responses`` and that state
(the multi-round-trip of that revision). The backend's call cannot be restarted (it is
waiting, mid-tool, for its elicitation or sampling answer), so the endpoint keeps it
running between the client's legs: :meth:`InputRounds.next` answers a leg with the
call's result once it finished, or with what the backend asks meanwhile; the
``request_state`` is a random single-use token bound to the client, valid for
:data:`HOLD_SECONDS` (then the call is cancelled and the backend gets an error).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

log = logging.getLogger(__name__)

HOLD_SECONDS = 600.0  # how long a call waits for the client's next leg


@dataclass(eq=False)
class HeldCall:
    """One client call and the backend's questions waiting for the client's answers."""

    client: str
    tool: str  # the name the client called: its retries must name it too
    task: asyncio.Task[types.CallToolResult] | None = None
    asked: dict[str, tuple[types.InputRequest, type[Any], asyncio.Future[Any]]] = field(
        default_factory=dict
    )
    sent: set[str] = field(default_factory=set)  # keys the client was shown
    news: asyncio.Event = field(default_factory=asyncio.Event)  # a new question
    expiry: asyncio.TimerHandle | None = None


class StateRefused(LookupError):
    """A retry's ``request_state`` names no call this retry may go on with: ``outcome``
    for the activity log, the message for the client."""

    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


class InputRounds:
    def __init__(self, hold_seconds: float = HOLD_SECONDS) -> None:
        self.hold_seconds = hold_seconds
        self._held: dict[str, HeldCall] = {}  # request_state -> call
        self._keys = itertools.count(1)

    def start(
        self, client: str, run: Coroutine[Any, Any, types.CallToolResult], held: HeldCall
    ) -> HeldCall:
        held.client = client
        held.task = asyncio.ensure_future(run)
        held.task.add_done_callback(lambda _t: held.news.set())
        return held

    async def ask(self, held: HeldCall, request: types.InputRequest, answer: type[Any]) -> Any:
        """The backend's request, put to the client at its next leg; its answer."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        key = f"{request.method.split('/')[0]}-{next(self._keys)}"
        held.asked[key] = (request, answer, future)
        held.news.set()
        try:
            return await future
        finally:
            held.asked.pop(key, None)
            held.sent.discard(key)

    async def next(self, held: HeldCall) -> types.CallToolResult | types.InputRequiredResult:
        """The call's result, or an ``InputRequiredResult`` with what is being asked."""
        assert held.task is not None
        try:
            while True:
                if held.task.done():
                    return held.task.result()
                waiting = {k: v[0] for k, v in held.asked.items() if k not in held.sent}
                if waiting:
                    await asyncio.sleep(0)  # a sibling question raised in the same moment
                    # ...or, in that moment, the question withdrawn or the call finished
                    if held.task.done():
                        return held.task.result()
                    waiting = {k: v[0] for k, v in held.asked.items() if k not in held.sent}
                    if not waiting:
                        continue
                    held.sent.update(waiting)
                    return types.InputRequiredResult(
                        input_requests=waiting, request_state=self._hold(held)
                    )
                held.news.clear()
                await held.news.wait()
        except asyncio.CancelledError:  # the client gave up on this leg: the call goes too
            held.task.cancel()
            raise

    def _hold(self, held: HeldCall) -> str:
        token = secrets.token_urlsafe(24)
        self._held[token] = held
        loop = asyncio.get_running_loop()
        held.expiry = loop.call_later(self.hold_seconds, self._expire, token)
        return token

    def _expire(self, token: str) -> None:
        held = self._held.pop(token, None)
        if held is not None and held.task is not None:
            log.info("gateway: %s did not answer a server's question in time", held.client)
            held.task.cancel()

    def resume(
        self, client: str, tool: str, token: str, responses: dict[str, Any] | None
    ) -> HeldCall:
        """The call a retry's ``request_state`` names, its answers delivered.

        Raises :class:`StateRefused` when the state is unknown, used, expired or another
        client's, or when the retry calls another tool than the held call (the state
        stays valid for the right retry then)."""
        held = self._held.get(token)
        if held is None or held.client != client:
            raise StateRefused(
                "refused: stale requestState",
                "requestState is unknown, already used or expired: call the tool again",
            )
        if held.tool != tool:
            raise StateRefused(
                "refused: requestState of another tool",
                f"requestState belongs to a call of {held.tool!r}, not {tool!r}: "
                f"retry {held.tool!r} with it, or call {tool!r} without one",
            )
        del self._held[token]
        if held.expiry is not None:
            held.expiry.cancel()
        given = responses or {}
        for key in list(held.sent):
            entry = held.asked.get(key)
            if entry is None or entry[2].done():
                continue
            _request, answer, future = entry
            if key not in given:
                future.set_exception(RuntimeError(f"the client did not answer the request {key!r}"))
                continue
            try:
                future.set_result(_as(answer, given[key]))
            except ValueError as exc:
                future.set_exception(RuntimeError(f"the client's answer to {key!r}: {exc}"))
        return held

    def close(self) -> None:
        for token in list(self._held):
            self._expire(token)


def _as(answer: type[Any], value: Any) -> Any:
    """The client's response as the type the backend's request expects (the wire union
    does not say which arm it is)."""
    if isinstance(value, answer):
        return value
    data = (
        value.model_dump(by_alias=True, exclude_none=True)
        if hasattr(value, "model_dump")
        else value
    )
    return answer.model_validate(data)  # a pydantic ValidationError is a ValueError
