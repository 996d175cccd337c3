"""The state machine of one connection's owner: one enum, every transition in one table.

The owner task is the only writer of the phase (``Connection.stop`` posts a request and
the owner moves). Each phase names what the owner is doing; ``STATUS_OF`` says which
:class:`~portico.runtime.events.Status` a face sees for it (``None``: the phase publishes
nothing and the previous status stays shown while the owner decides).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import Enum

from portico.runtime.events import Status


class Phase(Enum):
    IDLE = "idle"  # no owner task yet
    STARTING = "starting"  # owner running the trust gate / deciding lazy or live
    REVIEWING = "reviewing"  # the trust question is open: shown as AwaitingTrust, unsettled
    AWAITING_TRUST = "awaiting-trust"  # parked until reviewed
    REJECTED = "rejected"  # the person said no at the review; parked until asked again
    LAZY = "lazy"  # registered from the schema cache (or recycled), no process
    CONNECTING = "connecting"  # transport + initialize + lists
    RUNNING = "running"  # serving calls
    NEEDS_AUTH = "needs-auth"  # parked until a sign-in
    FAILED = "failed"  # the attempt failed; cooldown follows at once
    COOLDOWN = "cooldown"  # waiting before the next attempt
    STOPPING = "stopping"  # stop requested (or the owner was cancelled from outside)
    STOPPED = "stopped"  # owner ended
    DISABLED = "disabled"  # enabled = false in the config


_ANY_LIVE = frozenset(
    {
        Phase.STARTING,
        Phase.REVIEWING,
        Phase.AWAITING_TRUST,
        Phase.REJECTED,
        Phase.LAZY,
        Phase.CONNECTING,
        Phase.RUNNING,
        Phase.NEEDS_AUTH,
        Phase.FAILED,
        Phase.COOLDOWN,
    }
)

TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.IDLE: frozenset({Phase.STARTING, Phase.DISABLED, Phase.STOPPED}),
    Phase.STARTING: frozenset(
        {
            Phase.REVIEWING,
            Phase.AWAITING_TRUST,
            Phase.REJECTED,
            Phase.LAZY,
            Phase.CONNECTING,
            Phase.NEEDS_AUTH,
            Phase.FAILED,
        }
    ),
    Phase.REVIEWING: frozenset({Phase.STARTING}),
    Phase.AWAITING_TRUST: frozenset({Phase.STARTING}),
    Phase.REJECTED: frozenset({Phase.STARTING}),
    Phase.LAZY: frozenset({Phase.STARTING}),
    Phase.CONNECTING: frozenset({Phase.RUNNING, Phase.NEEDS_AUTH, Phase.FAILED}),
    # Running -> Starting: the server forgot the session, a new one starts at once.
    Phase.RUNNING: frozenset({Phase.LAZY, Phase.NEEDS_AUTH, Phase.FAILED, Phase.STARTING}),
    Phase.NEEDS_AUTH: frozenset({Phase.STARTING}),
    # Cooldown follows at once; a failure no retry can fix (a missing secret) stays Failed
    # until retry_now.
    Phase.FAILED: frozenset({Phase.COOLDOWN, Phase.STARTING}),
    Phase.COOLDOWN: frozenset({Phase.STARTING}),
    Phase.STOPPING: frozenset({Phase.STOPPED}),
    Phase.STOPPED: frozenset({Phase.STARTING, Phase.DISABLED, Phase.STOPPED}),
    Phase.DISABLED: frozenset({Phase.STARTING, Phase.DISABLED, Phase.STOPPED}),
}
# Any phase with an owner may be asked to stop.
for _phase in _ANY_LIVE:
    TRANSITIONS[_phase] = TRANSITIONS[_phase] | {Phase.STOPPING}
TRANSITIONS[Phase.STOPPING] = TRANSITIONS[Phase.STOPPING] | {Phase.STOPPING}

STATUS_OF: dict[Phase, Status | None] = {
    Phase.IDLE: None,
    Phase.STARTING: None,
    Phase.REVIEWING: Status.AWAITING_TRUST,
    Phase.AWAITING_TRUST: Status.AWAITING_TRUST,
    Phase.REJECTED: Status.REJECTED,
    Phase.LAZY: Status.LAZY,
    Phase.CONNECTING: Status.CONNECTING,
    Phase.RUNNING: Status.RUNNING,
    Phase.NEEDS_AUTH: Status.NEEDS_AUTH,
    Phase.FAILED: Status.FAILED,
    Phase.COOLDOWN: Status.COOLDOWN,
    Phase.STOPPING: None,
    Phase.STOPPED: Status.STOPPED,
    Phase.DISABLED: Status.DISABLED,
}

# Phases that stay without outside help (``wait_settled`` returns in them).
SETTLED_PHASES = frozenset(
    {
        Phase.AWAITING_TRUST,
        Phase.REJECTED,
        Phase.FAILED,
        Phase.LAZY,
        Phase.RUNNING,
        Phase.NEEDS_AUTH,
        Phase.COOLDOWN,
        Phase.STOPPED,
        Phase.DISABLED,
        Phase.IDLE,
    }
)


class BadTransition(RuntimeError):
    """A bug: the owner tried a move the table does not allow."""


class Lifecycle:
    """Holds the phase; ``move`` checks the table and tells ``on_status`` what to show."""

    def __init__(self, on_status: Callable[[Status, str | None, float | None], None]) -> None:
        self.phase = Phase.IDLE
        self._on_status = on_status
        self._changed = asyncio.Event()

    def move(self, to: Phase, *, error: str | None = None, retry_at: float | None = None) -> None:
        if to not in TRANSITIONS[self.phase]:
            raise BadTransition(f"{self.phase.name} -> {to.name}")
        self.phase = to
        status = STATUS_OF[to]
        if status is not None:
            self._on_status(status, error, retry_at)
        previous, self._changed = self._changed, asyncio.Event()
        previous.set()

    @property
    def settled(self) -> bool:
        return self.phase in SETTLED_PHASES

    async def changed(self) -> None:
        """Until the next move."""
        await self._changed.wait()


class Request(Enum):
    """What outside callers ask the owner for."""

    RETRY = "retry"  # retry now (cooldown, trust, sign-in)
    GO_LIVE = "go-live"  # a lazy server got a call
    STOP = "stop"


class Mailbox:
    """Requests to the owner; each kind is remembered until the owner takes it."""

    def __init__(self) -> None:
        self._pending: set[Request] = set()
        self._event = asyncio.Event()
        self.stop = asyncio.Event()  # set once STOP is posted (the serve loop waits on it)

    def post(self, request: Request) -> None:
        self._pending.add(request)
        if request is Request.STOP:
            self.stop.set()
        self._event.set()

    def has(self, request: Request) -> bool:
        return request in self._pending

    def take(self, request: Request) -> bool:
        if request in self._pending:
            self._pending.discard(request)
            if not self._pending:
                self._event.clear()
            return True
        return False

    def clear(self, *requests: Request) -> None:
        for request in requests:
            self._pending.discard(request)
        if not self._pending:
            self._event.clear()

    async def wait(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Until any request is pending (True) or ``timeout`` passes (False)."""
        if self._pending:
            return True
        try:
            async with asyncio.timeout(timeout):
                await self._event.wait()
        except TimeoutError:
            return False
        return True
