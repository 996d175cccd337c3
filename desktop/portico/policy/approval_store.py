"""Remembered tool approvals: Session ones in memory, Always ones on disk.

A Session approval also binds to the server's connection *generation*
(``Connection.generation``, which changes when a connected session ends or the connection
is replaced): a reconnect ends it. Always
approvals bind to the authority and tool contract only, so they survive restarts.

Always approvals live in ``<state dir>/approvals.json``. The file is rewritten atomically;
a damaged file is reported (a warning in :attr:`ApprovalStore.problems`) and treated as
empty, so a broken file can never approve anything.
"""

from __future__ import annotations

import json
from pathlib import Path

from portico.config.atomic import write_atomic
from portico.paths import paths
from portico.policy.approvals import ApprovalKey

FILE_NAME = "approvals.json"


def write_json_atomic(path: Path, data: object) -> None:
    """State files: written whole or not at all (temp file, fsync, rename), mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n", mode=0o600)


class ApprovalStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths().state_dir / FILE_NAME
        self._session: dict[ApprovalKey, int | None] = {}  # key -> connection generation
        self._always: set[ApprovalKey] | None = None
        self.problems: list[str] = []

    # --- lookups -------------------------------------------------------------------
    def allows(self, key: ApprovalKey, generation: int | None = None) -> bool:
        """True when an Always approval, or a Session one given on this connection
        ``generation``, covers this exact key or any arguments."""
        candidates = {key, key.widened()}
        for candidate in candidates:
            if candidate in self._session and self._session[candidate] == generation:
                return True
        return bool(candidates & self._load())

    # --- recording -----------------------------------------------------------------
    def allow_session(self, key: ApprovalKey, generation: int | None = None) -> None:
        self._session[key] = generation

    def allow_always(self, key: ApprovalKey) -> None:
        always = self._load()
        if key in always:
            return
        always.add(key)
        self._save(always)

    def forget_server(self, server: str) -> None:
        """Drop every remembered approval of ``server`` (both kinds)."""
        self._session = {k: g for k, g in self._session.items() if k.server != server}
        always = self._load()
        kept = {k for k in always if k.server != server}
        if kept != always:
            self._save(kept)

    def always_keys(self) -> set[ApprovalKey]:
        return set(self._load())

    # --- file ------------------------------------------------------------------------
    def _load(self) -> set[ApprovalKey]:
        if self._always is not None:
            return self._always
        keys: set[ApprovalKey] = set()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for item in data.get("always", []):
                keys.add(ApprovalKey.from_dict(item))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            self.problems.append(
                f"{self.path}: cannot read remembered approvals ({exc}); every tool asks "
                f"again. Delete the file to start over."
            )
            keys = set()
        self._always = keys
        return keys

    def _save(self, keys: set[ApprovalKey]) -> None:
        ordered = sorted((k.as_dict() for k in keys), key=lambda d: tuple(d.values()))
        write_json_atomic(self.path, {"version": 1, "always": ordered})
        self._always = set(keys)
