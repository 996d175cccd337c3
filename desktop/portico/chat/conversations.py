"""Conversations on disk: what a resumed chat needs back, the loaded tools included.

One JSON file per conversation under ``<state dir>/conversations``. The agent loop (the
chat issue) appends messages; the registry's tool_search fills ``active_tools``; both
survive a restart, so a resumed conversation sees the tools it had loaded.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portico.config.atomic import write_atomic
from portico.paths import paths
from portico.runtime.toolsearch import ActiveSet

FORMAT = 1


@dataclass
class Conversation:
    id: str
    title: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    active_tools: ActiveSet = field(default_factory=ActiveSet)
    parent: str | None = None  # set on a branch / continuation (it keeps the spend totals)
    updated: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "id": self.id,
            "title": self.title,
            "parent": self.parent,
            "updated": self.updated,
            "active_tools": self.active_tools.to_json(),
            "messages": self.messages,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        return cls(
            id=str(data["id"]),
            title=str(data.get("title", "")),
            messages=list(data.get("messages", [])),
            active_tools=ActiveSet.from_json(data.get("active_tools")),
            parent=data.get("parent"),
            updated=float(data.get("updated", 0.0)),
        )


class ConversationError(Exception):
    """A conversation file that cannot be read; the message names the file."""


class ConversationStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else paths().state_dir / "conversations"

    def new(self, title: str = "") -> Conversation:
        return Conversation(id=uuid.uuid4().hex, title=title)

    def branch(self, source: Conversation, title: str | None = None) -> Conversation:
        """A continuation: same messages and loaded tools, its own id, linked to the source."""
        return Conversation(
            id=uuid.uuid4().hex,
            title=source.title if title is None else title,
            messages=[dict(m) for m in source.messages],
            active_tools=ActiveSet(source.active_tools),
            parent=source.id,
        )

    def path(self, conversation_id: str) -> Path:
        return self.root / f"{conversation_id}.json"

    def save(self, conversation: Conversation) -> Path:
        conversation.updated = time.time()
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path(conversation.id)
        write_atomic(path, json.dumps(conversation.to_json(), indent=1) + "\n", mode=0o600)
        return path

    def load(self, conversation_id: str) -> Conversation:
        path = self.path(conversation_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format", FORMAT) > FORMAT:
                raise ConversationError(
                    f"{path}: written by a newer Portico (format {data['format']}); "
                    "update Portico to open it"
                )
            return Conversation.from_json(data)
        except FileNotFoundError:
            raise ConversationError(f"{path}: no such conversation") from None
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConversationError(f"{path}: not a readable conversation ({exc})") from exc

    def recent(self) -> list[Conversation]:
        """Every readable conversation, newest first (unreadable files are skipped here;
        ``load`` names what is wrong with one)."""
        found = []
        for path in self.root.glob("*.json"):
            try:
                found.append(self.load(path.stem))
            except ConversationError:
                continue
        return sorted(found, key=lambda c: c.updated, reverse=True)
