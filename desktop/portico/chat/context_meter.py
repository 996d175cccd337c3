"""The context meter: what a model request will send, in tokens estimated locally.

No tokenizer and no network call: about four characters a token, which is what the
common BPE tokenizers average on English text and JSON (code and other scripts run
denser, so this is an estimate and every face says so). An image counts a flat amount.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from portico.chat.providers.wire import (
    AssistantTurn,
    ModelRequest,
    ResultsTurn,
    ToolOffer,
    UserTurn,
)

CHARS_PER_TOKEN = 4
PER_MESSAGE = 4  # the role and separators each message carries
IMAGE_TOKENS = 1_000  # a downscaled image, roughly
NEAR = 0.8  # warn once the request and its answer fill this share of the context


def text_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)  # ceiling


def tool_server(name: str) -> str:
    """``server__tool`` -> ``server``; the built-in tool_search counts as itself."""
    return name.split("__", 1)[0] if "__" in name else name


def tool_tokens(tool: ToolOffer) -> int:
    schema = json.dumps(tool.input_schema, separators=(",", ":"), default=str)
    return text_tokens(tool.name) + text_tokens(tool.description) + text_tokens(schema) + 8


@dataclass(frozen=True)
class ContextEstimate:
    """Estimated tokens of one request: its parts, and the model's context if known."""

    system: int
    messages: int
    message_count: int
    tools: tuple[tuple[str, int, int], ...]  # (server, tools offered, their tokens)
    max_tokens: int  # the answer's room
    context_length: int | None = None

    @property
    def tools_total(self) -> int:
        return sum(tokens for _server, _count, tokens in self.tools)

    @property
    def total(self) -> int:
        return self.system + self.messages + self.tools_total

    @property
    def near_limit(self) -> bool:
        """The request plus its answer's room fill most of the model's context."""
        if not self.context_length:
            return False
        return self.total + self.max_tokens >= NEAR * self.context_length

    def summary(self) -> str:
        """One line for the pane: ``Context: ~12,300 of 32,768 tokens (estimate)``."""
        of = f" of {self.context_length:,}" if self.context_length else ""
        full = " · nearly full" if self.near_limit else ""
        return f"Context: ~{self.total:,}{of} tokens (estimate){full}"

    def breakdown(self) -> list[str]:
        lines = [
            f"Messages: ~{self.messages:,} tokens ({self.message_count} messages)",
            f"System prompt: ~{self.system:,} tokens",
        ]
        for server, count, tokens in self.tools:
            lines.append(f"Tools of {server}: ~{tokens:,} tokens ({count} schemas)")
        lines.append(f"Room for the answer (max_tokens): {self.max_tokens:,}")
        if self.context_length:
            lines.append(f"The model's context: {self.context_length:,} tokens")
            if self.near_limit:
                lines.append(
                    "Nearly full: the model may refuse the next request or forget the start "
                    "of the chat; start a new chat or branch from an earlier message."
                )
        else:
            lines.append("The model's context length is not known (set context_length).")
        lines.append("Estimated locally at about 4 characters a token, not by the provider.")
        return lines


def estimate(request: ModelRequest, context_length: int | None = None) -> ContextEstimate:
    messages = 0
    for turn in request.turns:
        messages += PER_MESSAGE
        if isinstance(turn, UserTurn):
            messages += text_tokens(turn.text) + IMAGE_TOKENS * len(turn.images)
        elif isinstance(turn, AssistantTurn):
            messages += text_tokens(turn.text)
            for block in turn.native:  # thinking and tool search blocks go back too
                if block.get("type") not in ("text", "tool_use"):
                    messages += text_tokens(json.dumps(block, default=str))
            for call in turn.calls:
                messages += text_tokens(call.name) + text_tokens(call.raw_arguments or "") + 4
        elif isinstance(turn, ResultsTurn):
            for result in turn.results:
                messages += text_tokens(result.text) + IMAGE_TOKENS * len(result.images) + 4
    per_server: dict[str, list[int]] = {}
    for tool in request.tools:
        if tool.deferred and request.native_search:
            continue  # the provider's tool search holds it back until found
        entry = per_server.setdefault(tool_server(tool.name), [0, 0])
        entry[0] += 1
        entry[1] += tool_tokens(tool)
    return ContextEstimate(
        system=text_tokens(request.system or ""),
        messages=messages,
        message_count=len(request.turns),
        tools=tuple((server, count, tokens) for server, (count, tokens) in per_server.items()),
        max_tokens=request.max_tokens,
        context_length=context_length,
    )
