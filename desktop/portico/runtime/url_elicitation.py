"""A call that needs the person on a web page first: error -32042 (URL elicitation
required, 2025-11-25) and ``notifications/elicitation/complete``.

The server answers the call with the URL elicitations it needs. Each is asked through the
connection's elicitation callback, so through the same policy and Prompter question as a
URL-mode ``elicitation/create`` (``elicitation.allow_url``, the URL review, the person's
own browser only on consent). Once the person accepted every one, the call waits for the
server's ``notifications/elicitation/complete`` of each and is then made again. A refusal,
or no completion in time (``elicitation.timeout``), ends the call with an error that says
which page it needed. No Qt here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from portico.runtime.errors import RuntimeFailure

log = logging.getLogger(__name__)

URL_ELICITATION_REQUIRED = -32042
MAX_ROUNDS = 3  # a server that keeps asking after each completion stops being retried
ANY_ID = ""  # an elicitation without an id waits for any completion

T = TypeVar("T")


def required(exc: BaseException) -> list[Any] | None:
    """The URL elicitations a failed call asks for (error -32042), else None. Looks
    through the reworded failure's cause too."""
    from mcp import MCPError
    from mcp.shared.exceptions import UrlElicitationRequiredError

    seen: BaseException | None = exc
    walked: set[int] = set()
    while seen is not None and id(seen) not in walked:  # a cause chain may loop
        walked.add(id(seen))
        if isinstance(seen, MCPError) and seen.error.code == URL_ELICITATION_REQUIRED:
            try:
                return list(UrlElicitationRequiredError.from_error(seen.error).elicitations)
            except Exception as bad:  # a malformed data field: nothing we can show
                log.info("a URL elicitation error without usable elicitations: %s", bad)
                return None
        seen = seen.__cause__
    return None


class Completions:
    """The ``notifications/elicitation/complete`` a connection heard, by elicitation id."""

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._changed = asyncio.Event()

    def completed(self, elicitation_id: str | None) -> None:
        self._done.add(elicitation_id or ANY_ID)
        self._changed.set()

    async def wait(self, elicitation_id: str | None, timeout: float) -> bool:  # noqa: ASYNC109
        """True once the server said ``elicitation_id`` completed (False: not in time)."""
        key = elicitation_id or ANY_ID
        try:
            async with asyncio.timeout(timeout):
                while key not in self._done:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            return False
        if key == ANY_ID:
            self._done.discard(ANY_ID)  # an id-less completion answers one wait
        return True


Ask = Callable[[Any, Any], Awaitable[Any]]  # the SDK elicitation callback (context, params)


async def calling(
    call: Callable[[], Awaitable[T]], satisfy_them: Callable[[list[Any]], Awaitable[None]]
) -> T:
    """``call()``; when it answers -32042, ``satisfy_them`` and call again (a few rounds)."""
    for round_ in range(MAX_ROUNDS + 1):
        try:
            return await call()
        except Exception as exc:
            needed = required(exc)
            if needed is None or round_ == MAX_ROUNDS:
                raise
            await satisfy_them(needed)
    raise AssertionError("unreachable")  # the last round returns or raises


async def satisfy(
    server: str,
    tool: str,
    elicitations: list[Any],
    *,
    ask: Ask | None,
    completions: Completions,
    timeout: float,  # noqa: ASYNC109
    note: Callable[[str], None],
) -> None:
    """Ask the person about each URL and wait for the server to say each is done;
    raises RuntimeFailure (the call's error) when that does not happen."""
    for params in elicitations:
        url, message = str(params.url), str(params.message)
        needed = f"{server}: tool {tool!r} needs you to open {url} first ({message})"
        if ask is None:
            raise RuntimeFailure(f"{needed}; elicitation is off for this server")
        note(f"tool {tool!r} needs a URL elicitation first: {url}")
        answer = await ask(None, params)
        action = getattr(answer, "action", "cancel")
        if action != "accept":
            word = "declined" if action == "decline" else "not answered"
            raise RuntimeFailure(f"{needed}; {word}, so the call was not made")
        if not await completions.wait(params.elicitation_id, timeout):
            raise RuntimeFailure(
                f"{needed}; the server did not say it was done within {timeout:g} s"
                " (elicitation.timeout): call the tool again once you have finished there"
            )
