"""Provider failures in plain words, each with what to do; never a traceback."""

from __future__ import annotations

from portico.chat.events import FailureKind


class ProviderError(Exception):
    """One sentence a person can act on. ``retryable``: trying again may work."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind = "server",
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.retryable = retryable
        self.retry_after = retry_after

    @property
    def message(self) -> str:
        return str(self)
