"""When a Streamable HTTP server has forgotten our session, and what may be sent again.

A 2025-11-25 server that restarts (or expires a session) answers every request that
carries the old ``Mcp-Session-Id`` with HTTP 404; the spec says the client MUST then
start a new session with a fresh ``initialize`` and no session id. Some servers answer
400 instead ("Bad Request: No valid session ID provided"), which is treated the same when
the body speaks of the session. Either answer proves the request was not processed, so a
failed request, a tool call included, is sent once more on the new session.

The connection asks :func:`forgotten` about a failed request's error responses, and
:func:`forgets_session` about each error response as it arrives (the GET stream of a
restarted server hears the 404 first, so the status need not wait for the next call).
"""

from __future__ import annotations

import time

from portico.runtime.errors import HttpErrorRecorder, HttpErrorResponse

# A server that forgets its new session again this soon is not renewed at once: the
# owner fails over to the cooldown (with its backoff) instead of reconnecting in a loop.
RENEW_MIN_INTERVAL = 10.0


def forgets_session(response: HttpErrorResponse) -> bool:
    """True for the answer of a server that no longer knows the session it was sent."""
    if not response.session:
        return False
    if response.status == 404:
        return True
    return response.status == 400 and "session" in response.body.lower()


def forgotten(recorder: HttpErrorRecorder, mark: int) -> HttpErrorResponse | None:
    """The answer that says the session is gone, when every request answered with an
    error since ``mark`` got that answer (a request that got another error, a 500 say,
    may have been processed and is never sent again); None otherwise."""
    if recorder.count - mark > len(recorder.recent):
        return None  # more errors than kept: cannot tell
    posts = [r for r in recorder.since(mark) if r.method == "POST"]
    if posts and all(forgets_session(r) for r in posts):
        return posts[-1]
    return None


class RenewalPace:
    """Remembers the last renewal, so that a server forgetting every session at once is
    given the cooldown instead of an immediate reconnect."""

    def __init__(self, min_interval: float = RENEW_MIN_INTERVAL) -> None:
        self.min_interval = min_interval
        self._last: float | None = None

    def allow(self) -> bool:
        """True (and remembered) when a renewal may happen now."""
        now = time.monotonic()
        if self._last is not None and now - self._last < self.min_interval:
            return False
        self._last = now
        return True


def describe_renewal(response: HttpErrorResponse) -> str:
    return (
        f"the server no longer knows this session ({response.describe()}); starting a new"
        " session (initialize)"
    )
