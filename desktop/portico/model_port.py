"""The ModelProvider port: how the core asks a model for a completion.

It sits at the bottom of the house, beside the Prompter port, because policy (sampling
review) needs it and chat implements it: ``portico.chat`` provides the real providers
(OpenAI-compatible and Anthropic HTTP APIs) behind this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from portico.prompts import SamplingMessage


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@runtime_checkable
class ModelProvider(Protocol):
    async def complete(
        self,
        messages: Sequence[SamplingMessage],
        system: str | None,
        model: str | None,
        max_tokens: int,
    ) -> tuple[str, str, Usage]:
        """Return ``(text, model actually used, usage)``. ``model=None``: the default."""
        ...
