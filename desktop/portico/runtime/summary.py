"""The one line printed after a discovery pass.

Grammar (``{}`` = filled in, ``[...]`` = present only when non-empty)::

    MCP: registered {T} tool(s) from {S} server(s)[ ({segment}; {segment}; ...)]

``T`` counts the tools in the registry, ``S`` the servers whose tools are registered
(running, or lazy from the schema cache). Segments appear in this order, each only when
its count is > 0; named lists are in config order, joined by ", "::

    {n} lazy, not spawned yet
    {n} still connecting: {name}, {name}
    {n} awaiting trust: {name}, {name}
    {n} needs sign-in: {name}, {name}
    {n} not attempted (in retry cooldown): {name}, {name}
    {n} failed: {name} ({error}); {name} ({error})

``failed`` is always last because its entries are themselves joined by "; ". An error is
its first line, without a leading "<name>: " (the entry names the server) and without a
trailing "; last stderr lines:" announcement, cut to 160 characters with "…". Disabled
servers are not mentioned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_ERROR = 160


@dataclass
class PassSummary:
    tools: int = 0
    servers: int = 0
    lazy: int = 0
    connecting: list[str] = field(default_factory=list)
    awaiting_trust: list[str] = field(default_factory=list)
    needs_auth: list[str] = field(default_factory=list)
    cooldown: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)

    def line(self) -> str:
        segments: list[str] = []
        if self.lazy:
            segments.append(f"{self.lazy} lazy, not spawned yet")
        for label, names in (
            ("still connecting", self.connecting),
            ("awaiting trust", self.awaiting_trust),
            ("needs sign-in", self.needs_auth),
            ("not attempted (in retry cooldown)", self.cooldown),
        ):
            if names:
                segments.append(f"{len(names)} {label}: {', '.join(names)}")
        if self.failed:
            entries = "; ".join(
                f"{name} ({short_error(_unprefixed(name, err))})" for name, err in self.failed
            )
            segments.append(f"{len(self.failed)} failed: {entries}")
        head = f"MCP: registered {self.tools} tool(s) from {self.servers} server(s)"
        return f"{head} ({'; '.join(segments)})" if segments else head


def _unprefixed(name: str, error: str | None) -> str | None:
    """ "github: boom" -> "boom": the entry names the server already."""
    prefix = f"{name}: "
    return error[len(prefix) :] if error and error.startswith(prefix) else error


def short_error(error: str | None) -> str:
    text = (error or "unknown error").strip().splitlines()
    first = text[0].strip() if text else "unknown error"
    if len(text) > 1 and first.endswith(":") and "; " in first:
        first = first.rsplit("; ", 1)[0]  # "server exited (code 1); last stderr lines:"
    if len(first) > MAX_ERROR:
        first = first[: MAX_ERROR - 1] + "…"
    return first
