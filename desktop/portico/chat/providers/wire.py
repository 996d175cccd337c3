"""Provider-neutral requests and stream parts: the agent loop speaks these, each provider
translates them to its own API."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from portico.chat.events import StopReason


@dataclass(frozen=True)
class ModelImage:
    mime_type: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class UserTurn:
    text: str
    images: tuple[ModelImage, ...] = ()


@dataclass(frozen=True)
class CallRequest:
    id: str
    name: str
    arguments: Mapping[str, Any]
    raw_arguments: str


@dataclass(frozen=True)
class AssistantTurn:
    text: str
    calls: tuple[CallRequest, ...] = ()
    # The response as provider kind ``native_kind`` wrote it (see ``messages.Round``):
    # that provider sends these blocks back instead of ``text`` and ``calls``.
    native: tuple[Mapping[str, Any], ...] = ()
    native_kind: str = ""


@dataclass(frozen=True)
class CallResult:
    id: str
    name: str
    text: str
    images: tuple[ModelImage, ...] = ()
    is_error: bool = False


@dataclass(frozen=True)
class ResultsTurn:
    results: tuple[CallResult, ...]


Turn = UserTurn | AssistantTurn | ResultsTurn


@dataclass(frozen=True)
class ToolOffer:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    deferred: bool = False  # found through the provider's own tool search (native_search)


@dataclass(frozen=True)
class ModelRequest:
    model: str
    turns: Sequence[Turn]
    system: str | None = None
    tools: Sequence[ToolOffer] = ()
    max_tokens: int = 4096
    temperature: float | None = None
    reasoning_effort: str | None = None  # openai: ``reasoning_effort``
    thinking_budget: int | None = None  # anthropic: ``thinking.budget_tokens``
    # The provider's own tool search finds the ``deferred`` tools (anthropic: the tool
    # search tool, ``defer_loading``); otherwise no tool is deferred here.
    native_search: bool = False


# --- what a stream yields ----------------------------------------------------------------


@dataclass(frozen=True)
class StreamText:
    text: str


@dataclass(frozen=True)
class StreamReasoning:
    text: str


@dataclass(frozen=True)
class StreamToolDelta:
    """A piece of a tool call as it streams (index: its place in this response)."""

    index: int
    id: str | None
    name: str | None
    arguments_delta: str


@dataclass(frozen=True)
class StreamDone:
    text: str
    calls: tuple[CallRequest, ...]
    stop_reason: StopReason
    input_tokens: int
    output_tokens: int
    model: str  # as the server named it
    thinking: str = ""  # the reasoning text that streamed (StreamReasoning), joined
    native: tuple[Mapping[str, Any], ...] = ()  # see AssistantTurn.native
    native_kind: str = ""


StreamPart = StreamText | StreamReasoning | StreamToolDelta | StreamDone


class ModelClient(Protocol):
    """One configured provider."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamPart]:
        """Text and tool-call deltas, then exactly one StreamDone. Raises ProviderError."""
        ...

    async def list_models(self) -> list[str]: ...

    async def context_length(self, model: str) -> int | None:
        """The model's context in tokens as the provider's model info says; None when
        it says nothing. May raise anything (the catalog treats it as unknown)."""
        ...

    async def aclose(self) -> None: ...


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """The model's JSON arguments; ``({}, problem)`` when they are not a JSON object."""
    import json

    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return {}, f"the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return {}, "the arguments are not a JSON object"
    return value, None
