"""A ModelProvider test double: records every request, answers with a fixed text."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from portico.model_port import Usage
from portico.prompts import SamplingMessage


class ScriptedModel:
    """A test double of the model: records calls, answers with a fixed text."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[tuple[tuple[SamplingMessage, ...], str | None, str | None, int]] = []
        self.delay = delay

    async def complete(
        self,
        messages: Sequence[SamplingMessage],
        system: str | None,
        model: str | None,
        max_tokens: int,
    ) -> tuple[str, str, Usage]:
        self.calls.append((tuple(messages), system, model, max_tokens))
        if self.delay:
            await asyncio.sleep(self.delay)
        return f"answer to {messages[-1].text}", model or "scripted-1", Usage(7, 5)
