"""A conversation's contents as plain data: messages (a tree, for branches), tool calls,
attachments. Provider-neutral: each provider converts these to its own wire format.

Messages form a tree through ``parent_id``: editing a user message or regenerating an
answer adds a sibling, and the conversation's ``leaf_id`` says which path is shown.
Additive changes only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from portico.chat.events import CallOutcome

Role = Literal["user", "assistant"]
MessageStatus = Literal[
    "complete",
    "streaming",  # being written (after a crash: what survived; shown as interrupted)
    "stopped",  # the person stopped the turn; the text is the partial answer
    "failed",  # the turn failed; ``error`` says why (retry runs it again)
]


@dataclass(frozen=True)
class Attachment:
    """Something that goes with a user message.

    ``kind="file"``: a local file by path (images go to vision models as images; text
    files and PDFs as their text, read once when sent, see ``chat.attachments``).
    ``kind="resource"``: an MCP resource (``@server:uri``), its text captured when
    attached so a resumed chat reads the same.
    """

    kind: Literal["file", "resource"]
    name: str
    path: Path | None = None
    server: str | None = None
    uri: str | None = None
    mime_type: str | None = None
    text: str | None = None  # resource text (or a file's text, once read)
    size: int = 0  # bytes of the file as attached (0: not known, e.g. older chats)


@dataclass
class ToolCall:
    """One tool call of an assistant message, with what came back."""

    id: str
    name: str  # the qualified name the model used
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str = ""
    outcome: CallOutcome | None = None  # None while running
    # What the model got back: the text, and images by path (``MEDIA:`` lines in text).
    result_text: str = ""
    result_images: tuple[Path, ...] = ()
    is_error: bool = False
    duration: float = 0.0
    # The ``ui://`` view its tool declared when it returned: a reopened chat can say the
    # view is there even when the server is gone.
    view_uri: str | None = None


@dataclass
class Round:
    """One model response inside an assistant message: its text, then its tool calls."""

    text: str = ""
    tool_call_ids: list[str] = field(default_factory=list)
    thinking: str = ""  # what the model thought before answering (shown collapsed)
    # The response as the provider ``native_kind`` wrote it, block by block, when it holds
    # blocks that must go back unchanged in the next request (Anthropic: ``thinking`` and
    # ``redacted_thinking`` with their signature, tool search's ``server_tool_use`` and
    # ``tool_search_tool_result``); empty otherwise.
    native: list[dict[str, Any]] = field(default_factory=list)
    native_kind: str = ""


@dataclass
class Message:
    id: str
    role: Role
    text: str = ""
    parent_id: str | None = None
    created: float = field(default_factory=time.time)
    status: MessageStatus = "complete"
    model: str | None = None  # "provider/model" for assistant messages
    tool_calls: list[ToolCall] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    # An assistant message may span several model rounds; ``rounds`` holds the text of
    # each round with the calls made after it, so providers can replay the exact order.
    rounds: list[Round] = field(default_factory=list)


def text_beyond_rounds(message: Message) -> str:
    """What ``message.text`` holds that its rounds do not show: all of it without rounds,
    the tail an answer stored while it streamed has before its round is saved, else "".

    ``text`` is the rounds' texts joined with a blank line (``Chat._model_loop``), so it
    is never "in" their plain concatenation: comparing with that showed every answer
    with a tool call between two texts twice."""
    shown = "\n\n".join(r.text for r in message.rounds if r.text)
    if not shown:
        return message.text
    if message.text.startswith(shown):
        return message.text[len(shown) :].lstrip("\n")
    return "" if message.text in shown else message.text


@dataclass(frozen=True)
class ConversationSummary:
    """A row of the conversation list (newest first)."""

    id: str
    title: str
    updated: float
    created: float
    model: str | None
    message_count: int
    parent_id: str | None = None
    pinned: bool = False
    archived: bool = False


@dataclass(frozen=True)
class SearchHit:
    conversation_id: str
    title: str
    message_id: str
    snippet: str  # with the match between [ and ]
    updated: float


def summary_json(summary: ConversationSummary) -> Mapping[str, Any]:
    return {
        "id": summary.id,
        "title": summary.title,
        "updated": summary.updated,
        "created": summary.created,
        "model": summary.model,
        "messages": summary.message_count,
        "parent": summary.parent_id,
        "pinned": summary.pinned,
        "archived": summary.archived,
    }
