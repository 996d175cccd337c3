"""Route the MCP library's log records about a server into that server's log.

The SDK logs transport trouble itself (``logger.exception("Encountered SSE exception")``
in ``mcp.client.sse``, warnings in the session, httpx2's client). With no logging set up,
Python's last-resort handler prints those records, tracebacks included, on our stderr,
before our own one-line error. A connection marks its owner task (and each call) with
:func:`bind`; records of level WARNING and above logged in that context go to the
server's :class:`ServerLog` as one line and stop there. Every other record goes on to the
root logger's handlers exactly as if it had propagated.
"""

from __future__ import annotations

import contextvars
import logging

from portico.runtime.serverlog import ServerLog

# "client": mcp/client/session.py logs under that bare name.
SDK_LOGGERS = ("mcp", "client", "httpx2")

_current: contextvars.ContextVar[ServerLog | None] = contextvars.ContextVar(
    "portico_server_log", default=None
)


def summarize(record: logging.LogRecord) -> str:
    """One line: the library's message plus the exception it carried, if any."""
    text = f"MCP library ({record.name}): {record.getMessage()}"
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        detail = str(exc)
        text += f" ({type(exc).__name__}: {detail})" if detail else f" ({type(exc).__name__})"
    return text.replace("\n", " ")


class _ServerRouter(logging.Handler):
    """Sits on the SDK's loggers (which no longer propagate) and sorts their records."""

    def emit(self, record: logging.LogRecord) -> None:
        server_log = _current.get()
        if server_log is not None and record.levelno >= logging.WARNING:
            try:
                server_log.add(summarize(record), "portico")
            except Exception:  # logging must never break a connection
                self.handleError(record)
            return
        # Not about a server we run (or below WARNING): what propagation would have done.
        logging.getLogger().handle(record)


_router = _ServerRouter()


_sdk_loggers: list[logging.Logger] = []


def install() -> None:
    """Idempotent: put the router on the SDK's top loggers (runs on every call: the
    loggers are looked up once, since ``getLogger`` takes logging's lock)."""
    if not _sdk_loggers:
        _sdk_loggers.extend(logging.getLogger(name) for name in SDK_LOGGERS)
    for logger in _sdk_loggers:
        if _router not in logger.handlers:
            logger.addHandler(_router)
            logger.propagate = False


def bind_task(server_log: ServerLog) -> None:
    """Like :func:`bind` for the rest of the current task (its context is its own copy)."""
    install()
    _current.set(server_log)


class bind:
    """Records logged in this context (and tasks started from it) belong to ``server_log``.
    A class, not a generator: every tool call enters one."""

    __slots__ = ("_log", "_token")

    def __init__(self, server_log: ServerLog) -> None:
        self._log = server_log

    def __enter__(self) -> None:
        install()
        self._token = _current.set(self._log)

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)
