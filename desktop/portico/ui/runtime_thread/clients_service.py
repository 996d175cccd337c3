"""The Clients view's runtime side: the clients the local endpoint knows, plain copies.

Runs on the runtime loop (``PageService.clients`` / ``revoke_client``): the list file is
read in a worker thread and the token records through the secret store, never on the
GUI thread. With the endpoint running, its own book is used, so a revoked token stops
working at once (the next request gets 401); without it, the files are changed and a
later endpoint never knows the token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from portico.gateway.clients import Client, ClientBook

if TYPE_CHECKING:
    from portico.auth.secret_store import SecretStore
    from portico.gateway.endpoint import Endpoint


@dataclass(frozen=True)
class ClientRow:
    name: str
    created: float  # time.time(), 0.0 when not known
    last_used: float | None  # the last request this app's endpoint served it
    last_asked: str  # "tools/call tb__echo: ok", "" when it asked nothing yet
    sees: str = "all servers and tools"  # the client's profile in words


@dataclass(frozen=True)
class ClientsSnapshot:
    endpoint_url: str | None  # None: the endpoint is off in this app
    clients: tuple[ClientRow, ...]


async def snapshot(endpoint: Endpoint | None, secrets: SecretStore) -> ClientsSnapshot:
    if endpoint is None:
        book = ClientBook(secrets)
        await book.load()
        rows = tuple(ClientRow(c.name, c.created, None, "", c.profile_text()) for c in _named(book))
        return ClientsSnapshot(None, rows)
    book = endpoint.book
    await book.load()  # `portico clients add` in a terminal meanwhile
    entries = endpoint.gateway.activity.entries()
    last: dict[str, str] = {}
    for entry in entries:
        asked = " ".join(p for p in (entry.method, entry.target) if p)
        last[entry.client] = f"{asked}: {entry.outcome}"
    rows = tuple(
        ClientRow(
            c.name,
            c.created,
            book.last_used.get(c.name),
            last.get(c.name, ""),
            c.profile_text(),
        )
        for c in _named(book)
    )
    return ClientsSnapshot(endpoint.url, rows)


async def revoke(endpoint: Endpoint | None, secrets: SecretStore, name: str) -> bool:
    """Remove ``name``'s token; False if no such client was known."""
    book = endpoint.book if endpoint is not None else ClientBook(secrets)
    return await book.remove(name)


def _named(book: ClientBook) -> list[Client]:
    # The CLI's per-process token is not a client a person added or can revoke.
    return sorted((c for c in book.clients() if not c.ephemeral), key=lambda c: c.name)
