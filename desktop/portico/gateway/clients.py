"""The clients the local endpoint knows, each with its own bearer token.

Tokens live in the secret store's internal namespace (``gateway-clients/<name>``: the
keyring, or 0600 files / memory without one); the list of names and their allowed
``Origin`` values and profiles (the servers and tools each sees) is
``<state dir>/gateway/clients.json`` (no secrets in it). A token is
looked up by its SHA-256, so comparing it costs the same whatever it holds. An
*ephemeral* client (the CLI's token of one running endpoint) lives in memory only.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from portico.auth.secret_store import CLIENT_PREFIX, FALLBACK_FIX, SecretStore
from portico.paths import paths

CLIENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
TOKEN_PREFIX = "pgw_"  # recognisable in a config file or a leak scanner
RELOAD_EVERY = 1.0  # seconds: an unknown token re-reads the list at most this often


class ClientError(Exception):
    """A client name, list file or token store problem, worded for a person."""


def clients_file() -> Path:
    return paths().state_dir / "gateway" / "clients.json"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    if not CLIENT_NAME.fullmatch(name):
        raise ClientError(
            f"client name {name!r} is not valid: use letters, digits, '-' and '_' "
            "(at most 64, starting with a letter or digit)"
        )
    return name


@dataclass(frozen=True)
class Client:
    name: str
    # Origin header values this client may send (a browser-based client); a request
    # without Origin is always allowed (native clients send none).
    origins: tuple[str, ...] = ()
    created: float = 0.0
    ephemeral: bool = False
    # The client's profile: the servers it sees (None: all) and glob patterns of the
    # ``server__tool`` names it sees (empty: all of those servers' tools).
    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] = ()

    def allows_origin(self, origin: str | None) -> bool:
        return not origin or origin in self.origins

    def sees_server(self, server: str) -> bool:
        return self.servers is None or server in self.servers

    def sees_tool(self, server: str, qualified: str) -> bool:
        if not self.sees_server(server):
            return False
        return not self.tools or any(fnmatch.fnmatchcase(qualified, p) for p in self.tools)

    @property
    def limited(self) -> bool:
        return self.servers is not None or bool(self.tools)

    def profile_text(self) -> str:
        """The profile in words (the Clients view, `portico clients list`)."""
        if not self.limited:
            return "all servers and tools"
        parts = []
        if self.servers is not None:
            parts.append("servers: " + (", ".join(self.servers) or "none"))
        if self.tools:
            parts.append("tools: " + ", ".join(self.tools))
        return "; ".join(parts)


def loopback_origin(origin: str) -> bool:
    """A page on this machine itself (http://localhost:PORT): a DNS-rebound page has a
    foreign host in its Origin, and every request still needs the client's token."""
    match = re.fullmatch(r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?", origin)
    return match is not None


def _stamp_of(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class ClientBook:
    """The known clients and their tokens, for one process."""

    secrets: SecretStore
    path: Path = field(default_factory=clients_file)
    _clients: dict[str, Client] = field(default_factory=dict)
    _by_digest: dict[str, str] = field(default_factory=dict)  # sha256(token) -> name
    _ephemeral: dict[str, tuple[Client, str]] = field(default_factory=dict)
    _loaded_at: float = 0.0
    _stamp: tuple[int, int, int] | None = None  # the list file's when it was read
    last_used: dict[str, float] = field(default_factory=dict)

    # --- reading ---------------------------------------------------------------------

    def clients(self) -> list[Client]:
        return [*self._clients.values(), *(c for c, _ in self._ephemeral.values())]

    def client(self, name: str) -> Client | None:
        held = self._ephemeral.get(name)
        return held[0] if held is not None else self._clients.get(name)

    def allows_origin(self, origin: str) -> bool:
        """Some client may send this Origin (the others are refused before the token)."""
        return loopback_origin(origin) or self.claimed(origin)

    def claimed(self, origin: str) -> bool:
        """Some client lists this Origin as its own (then only that client may send it)."""
        return any(origin in c.origins for c in self.clients())

    async def load(self) -> None:
        """Read the list and every listed client's token (one keyring read each)."""
        stamp = _stamp_of(self.path)
        listed = await asyncio.to_thread(_read_list, self.path)
        by_digest: dict[str, str] = {}
        for client in listed.values():
            token = await self.secrets.get_record(CLIENT_PREFIX + client.name)
            if token:
                by_digest[_digest(token)] = client.name
        for name, (_client, token) in self._ephemeral.items():
            by_digest[_digest(token)] = name
        self._clients, self._by_digest = listed, by_digest
        self._loaded_at = time.monotonic()
        self._stamp = stamp

    async def identify(self, token: str | None) -> Client | None:
        """The client this bearer token belongs to, else None. A token not known yet
        re-reads the list (``portico connect`` in another process may have added it)."""
        if not token:
            return None
        if _stamp_of(self.path) != self._stamp:
            # removed or replaced in another process (`portico clients remove`): a token
            # that was revoked there must stop working here at once
            await self.load()
        name = self._by_digest.get(_digest(token))
        if name is None and time.monotonic() - self._loaded_at >= RELOAD_EVERY:
            await self.load()
            name = self._by_digest.get(_digest(token))
        client = self.client(name) if name is not None else None
        if client is not None:
            self.last_used[client.name] = time.time()
        return client

    # --- changing --------------------------------------------------------------------

    def add_ephemeral(self, name: str) -> str:
        """A client whose token lives only as long as this process (the CLI's)."""
        token = new_token()
        self._ephemeral[check_name(name)] = (Client(name, ephemeral=True), token)
        self._by_digest[_digest(token)] = name
        return token

    async def set_profile(
        self, name: str, servers: tuple[str, ...] | None, tools: tuple[str, ...]
    ) -> Client:
        """Limit what ``name`` sees (``servers`` None and no ``tools``: everything)."""
        listed = await asyncio.to_thread(_read_list, self.path)
        old = listed.get(name)
        if old is None:
            raise ClientError(f"no client named {name!r} (see `portico clients list`)")
        listed[name] = replace(old, servers=servers, tools=tuple(tools))
        await asyncio.to_thread(_write_list, self.path, listed)
        await self.load()
        return listed[name]

    async def add(self, name: str, origins: tuple[str, ...] = ()) -> str:
        """Create (or replace) ``name``'s token; returns it. The old token stops working."""
        check_name(name)
        for origin in origins:
            if not re.fullmatch(r"https?://[^/\s]+", origin):
                raise ClientError(
                    f"origin {origin!r} is not an origin: write it as scheme://host[:port]"
                )
        if self.secrets.storage_kind() == "memory":
            raise ClientError(
                f"cannot keep a token for {name!r}: no secure keyring is available on this "
                f"machine, so it would be lost when this command ends. To keep client tokens "
                f"in files readable only by you, {FALLBACK_FIX}."
            )
        listed = await asyncio.to_thread(_read_list, self.path)
        token = new_token()
        await self.secrets.set_record(CLIENT_PREFIX + name, token)
        old = listed.get(name)
        client = Client(
            name,
            tuple(origins),
            old.created if old else time.time(),
            servers=old.servers if old else None,
            tools=old.tools if old else (),
        )
        listed[name] = replace(client)
        await asyncio.to_thread(_write_list, self.path, listed)
        await self.load()
        return token

    async def remove(self, name: str) -> bool:
        """Forget ``name`` and its token; False if it was not known."""
        listed = await asyncio.to_thread(_read_list, self.path)
        if listed.pop(name, None) is None:
            return False
        await asyncio.to_thread(_write_list, self.path, listed)
        await self.secrets.delete_record(CLIENT_PREFIX + name)
        await self.load()
        return True


def _read_list(path: Path) -> dict[str, Client]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ClientError(
            f"{path}: cannot read the endpoint's client list ({exc}); fix or delete the file"
        ) from exc
    rows = data.get("clients") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ClientError(f"{path}: 'clients' must be a list; fix or delete the file")
    out: dict[str, Client] = {}
    for index, row in enumerate(rows):
        name = row.get("name") if isinstance(row, dict) else None
        if not isinstance(name, str) or not CLIENT_NAME.fullmatch(name):
            raise ClientError(f"{path}: clients[{index}] has no valid 'name'")
        origins = row.get("origins") or []
        if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
            raise ClientError(f"{path}: clients[{index}] ({name}): 'origins' must be a list")
        created = row.get("created", 0.0)
        servers = row.get("servers")
        if servers is not None and (
            not isinstance(servers, list) or not all(isinstance(x, str) for x in servers)
        ):
            raise ClientError(f"{path}: clients[{index}] ({name}): 'servers' must be a list")
        tools = row.get("tools") or []
        if not isinstance(tools, list) or not all(isinstance(x, str) for x in tools):
            raise ClientError(f"{path}: clients[{index}] ({name}): 'tools' must be a list")
        out[name] = Client(
            name,
            tuple(origins),
            float(created or 0.0),
            servers=tuple(servers) if servers is not None else None,
            tools=tuple(tools),
        )
    return out


def _write_list(path: Path, clients: dict[str, Client]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    rows: list[dict[str, object]] = []
    for c in clients.values():
        row: dict[str, object] = {"name": c.name, "origins": list(c.origins), "created": c.created}
        if c.servers is not None:
            row["servers"] = list(c.servers)
        if c.tools:
            row["tools"] = list(c.tools)
        rows.append(row)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"clients": rows}, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
