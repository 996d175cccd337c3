"""What a turn tells its face: typed, frozen events, in the order they happen.

``Chat.send`` (and ``retry`` / ``edit`` / ``regenerate`` / ``command``) yield these; a
face renders them and nothing else. Every event is plain data (no callbacks, no loop
objects), so a face on another thread can receive it as is.

A turn always ends with exactly one of :class:`TurnFinished` or :class:`TurnFailed`;
only a :class:`TitleChanged` may follow it (the model's title after the first exchange).
Stopping (cancelling the task that iterates the turn) ends it with
``TurnFinished(stop_reason="stopped")`` when the iterator is still being consumed; the
partial answer is kept in the conversation with ``status="stopped"``.

Additive changes only: new event classes and new fields with defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from portico.prompts import SpendApprovalRequest, ToolApprovalRequest
from portico.runtime.results import ToolResult

if TYPE_CHECKING:
    from portico.chat.messages import Attachment

StopReason = Literal[
    "end_turn",  # the model finished its answer
    "max_tokens",  # the answer was cut at the provider's max_tokens
    "tool_rounds",  # max_tool_rounds ended a runaway tool loop (a Notice says so)
    "stopped",  # the person stopped the turn; the partial answer is kept, marked stopped
    "refusal",  # the provider refused to answer (content filter)
    "direct",  # a slash command ran without a model (direct mode)
]

CallOutcome = Literal[
    "ok",  # the tool ran and returned a result (which may itself be is_error)
    "error",  # the call failed (server gone, timeout, invalid arguments, protocol error)
    "denied",  # the person said no (approval or spend dialog)
    "refused",  # nobody could be asked (non-interactive), so it was not run
    "cancelled",  # the turn was stopped, or the person cancelled this one call
    # (Chat.cancel_call); the server got notifications/cancelled
]

# What the model reads back for a call the person cancelled on its own (the turn went on).
CANCELLED_BY_PERSON = (
    "The person cancelled this call before it returned, so it has no result. Do not run "
    "it again unless they ask; go on with what you have."
)

FailureKind = Literal[
    "auth",  # 401/403: bad or missing key
    "not_found",  # 404: unknown model (the message lists the server's models)
    "no_tools",  # the model (or the server as it runs) takes no tool calls
    "rate_limit",  # 429 (retry_after set when the server said)
    "context",  # context too long
    "network",  # cannot reach the server
    "incompatible",  # the server does not speak the provider's API
    "server",  # 5xx or another provider error
    "truncated",  # the answer's stream ended before its end (what arrived is kept)
    "no_model",  # a turn that needs a model, with none configured
    "config",  # the chosen provider/model is not configured or its key cannot be read
    "spend",  # the request would pass the provider's spend_limit and was not approved
    "command",  # a slash command or mention that cannot run (the error has its usage)
    "attachment",  # an attached file cannot be sent (unreadable, too big, binary, no text)
    "internal",  # a bug in Portico (logged with its traceback; the message is one line)
]


@dataclass(frozen=True)
class TurnStarted:
    """A turn began. ``user_message_id`` is the message the person sent (None for a
    regenerate, which reuses the previous one); ``message_id`` is the assistant message
    the following deltas belong to."""

    turn_id: str
    message_id: str
    user_message_id: str | None
    model: str | None  # "provider/model", None in direct mode


@dataclass(frozen=True)
class UserMessageAdded:
    """The core added the person's message (as sent, or rendered from ``/server:prompt``;
    attachments are the resolved ``@server:uri`` mentions and files)."""

    message_id: str
    text: str
    attachments: tuple[str, ...] = ()  # names
    # each attachment as stored (name, type, size, path or URI), without its text
    details: tuple[Attachment, ...] = ()


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's answer, in order. ``message_id``: see TurnStarted."""

    text: str
    message_id: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's visible reasoning (providers that stream it), in order."""

    text: str
    message_id: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model (or a ``/call``) asked for a tool. Approval, if needed, comes next."""

    id: str  # unique in the conversation; every later event of this call carries it
    server: str  # "" for tool_search and unknown tools
    tool: str  # the server's own tool name
    qualified_name: str  # <server>__<tool>, as the model saw it
    arguments: Mapping[str, Any]  # {} when the model sent unparseable JSON (see raw)
    raw_arguments: str = ""  # the JSON text as the model sent it
    message_id: str = ""


@dataclass(frozen=True)
class ToolCallProgress:
    """``notifications/progress`` of a running call."""

    id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class ToolCallTask:
    """The server answered the call with a task (tasks extension) and it changed state:
    ``status`` is working, input_required, completed, failed, cancelled or expired."""

    id: str
    server: str
    tool: str
    task_id: str
    status: str
    message: str | None = None


@dataclass(frozen=True)
class ToolCallFinished:
    """A call ended. ``result`` is the runtime's ToolResult when the server answered
    (``outcome="ok"``; the result can still be ``is_error``); otherwise ``result`` is None
    and ``error`` says in plain words what happened. ``outcome`` tells a refusal by the
    person (``denied``) or by nobody being there (``refused``) from a failure."""

    id: str
    outcome: CallOutcome
    result: ToolResult | None = None
    error: str | None = None
    duration: float = 0.0  # seconds

    @property
    def ok(self) -> bool:
        return self.outcome == "ok" and self.result is not None and not self.result.is_error


@dataclass(frozen=True)
class ApprovalAsked:
    """The guard is asking the person about call ``call_id`` (through the Prompter the
    face gave the chat). ``request`` is the Prompter's request, so a face that shows
    events inline can render the same text."""

    call_id: str
    request: ToolApprovalRequest | SpendApprovalRequest


@dataclass(frozen=True)
class ApprovalAnswered:
    """The answer to an ApprovalAsked: ``choice`` is an ApprovalChoice value ("once",
    "session", "always", "deny"); None when the question was refused (nobody to ask),
    timed out or aborted (``note`` says which)."""

    call_id: str
    choice: str | None
    note: str = ""


@dataclass(frozen=True)
class Usage:
    """Tokens of one model request (the providers' usage fields), the turn's so far (its
    answer's requests: a turn with tool calls makes several) and the conversation's."""

    input_tokens: int
    output_tokens: int
    model: str  # "provider/model" as answered
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    turn_input_tokens: int = 0
    turn_output_tokens: int = 0
    message_id: str = ""  # the answer they belong to
    # From the provider's price table (None: no price for this model): this request's
    # cost, the answer's so far and every model request of the conversation's.
    cost: float | None = None
    turn_cost: float | None = None
    total_cost: float | None = None
    currency: str = ""


@dataclass(frozen=True)
class SpendChanged:
    """A costed tool call was counted: the chat's totals per server (in cost units)."""

    totals: Mapping[str, float]


@dataclass(frozen=True)
class Notice:
    """A line for the person that is not part of the answer: slash-command output
    (``/help``, ``/model``), the tool-round limit, a retry hint."""

    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class AttachmentAdded:
    """``@server:uri`` resolved: the resource's contents go with the next message."""

    server: str
    uri: str
    name: str
    mime_type: str | None = None
    size: int = 0


@dataclass(frozen=True)
class TitleChanged:
    conversation_id: str
    title: str


@dataclass(frozen=True)
class ModelChanged:
    """``/model`` or ``Chat.set_model``: what the next turn uses (None: direct mode)."""

    model: str | None


@dataclass(frozen=True)
class YoloChanged:
    on: bool


@dataclass(frozen=True)
class ConversationChanged:
    """``/new`` or ``/branch``: the face should now show conversation ``conversation_id``
    (get it with ``ChatHost.open``; for /branch ``parent_id`` is the one left)."""

    conversation_id: str
    parent_id: str | None = None
    reason: Literal["new", "branch"] = "new"


@dataclass(frozen=True)
class ToolsChanged:
    """The tools offered to the model changed (tool_search loaded some, /reload-mcp)."""

    loaded: tuple[str, ...] = ()


@dataclass(frozen=True)
class TurnFinished:
    message_id: str
    stop_reason: StopReason
    tool_rounds: int = 0


@dataclass(frozen=True)
class TurnFailed:
    """The turn could not finish. ``error`` is one plain sentence with what to do; the
    conversation is intact and ``Chat.retry()`` runs the turn again when ``retryable``."""

    error: str
    retryable: bool
    kind: FailureKind = "internal"
    retry_after: float | None = None  # seconds, when the provider said (429)
    message_id: str = ""


Event = (
    TurnStarted
    | UserMessageAdded
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallTask
    | ToolCallFinished
    | ApprovalAsked
    | ApprovalAnswered
    | Usage
    | SpendChanged
    | Notice
    | AttachmentAdded
    | TitleChanged
    | ModelChanged
    | YoloChanged
    | ConversationChanged
    | ToolsChanged
    | TurnFinished
    | TurnFailed
)


def event_to_json(event: Event) -> dict[str, Any]:
    """One event as JSON-ready data (``portico chat --json``): ``{"type": ..., ...}``."""
    from portico.chat.jsonable import event_json

    return event_json(event)


__all__ = [
    "CANCELLED_BY_PERSON",
    "ApprovalAnswered",
    "ApprovalAsked",
    "AttachmentAdded",
    "CallOutcome",
    "ConversationChanged",
    "Event",
    "FailureKind",
    "ModelChanged",
    "Notice",
    "ReasoningDelta",
    "SpendChanged",
    "StopReason",
    "TextDelta",
    "TitleChanged",
    "ToolCallFinished",
    "ToolCallProgress",
    "ToolCallStarted",
    "ToolCallTask",
    "ToolsChanged",
    "TurnFailed",
    "TurnFinished",
    "TurnStarted",
    "Usage",
    "UserMessageAdded",
    "YoloChanged",
    "event_to_json",
]
