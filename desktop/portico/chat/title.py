"""Titles: the first words at once, then (with a model) a short title the model writes."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from portico.chat.providers.errors import ProviderError
from portico.chat.providers.wire import ModelRequest, UserTurn

if TYPE_CHECKING:
    from portico.chat.providers.catalog import ModelCatalog

log = logging.getLogger(__name__)
MAX_WORDS = 7
MAX_CHARS = 60
TITLE_TIMEOUT = 15.0


def from_words(text: str) -> str:
    words = " ".join(text.split()).split(" ")
    short = " ".join(words[:MAX_WORDS])
    if len(short) > MAX_CHARS:
        short = short[: MAX_CHARS - 1].rstrip() + "…"
    elif len(words) > MAX_WORDS:
        short += "…"
    return short or "New chat"


def clean(text: str) -> str:
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.strip().strip("\"'`*#").strip()
    if line.lower().startswith("title:"):
        line = line[6:].strip()
    return line.rstrip(".")[:MAX_CHARS].strip()


async def from_model(
    models: ModelCatalog, ref: str | None, question: str, answer: str
) -> str | None:
    """A title by the model, or None when it cannot make one (never raises)."""
    try:
        provider, model = models.resolve(ref)
        prompt = (
            "Write a title of at most six words for this exchange. Reply with the title "
            f"only.\n\nQuestion: {question[:1500]}\n\nAnswer: {answer[:1500]}"
        )
        request = ModelRequest(model=model, turns=[UserTurn(prompt)], max_tokens=24)
        done = await asyncio.wait_for(models.run(provider, request), TITLE_TIMEOUT)
    except (ProviderError, TimeoutError) as exc:
        log.info("no title from the model: %s", exc)
        return None
    return clean(done.text) or None
