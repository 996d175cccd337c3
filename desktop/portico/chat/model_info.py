"""What a model server says about its models: size, context length, tool calls.

Read from the servers' own APIs where they have one, by the shape of the answer (not the
port): Ollama (``GET /api/tags`` sizes, ``POST /api/show`` ``model_info.*.context_length``
and ``capabilities``), LM Studio (``GET /api/v0/models``: ``loaded_context_length`` /
``max_context_length``, ``capabilities``), llama.cpp's server (``meta`` in ``/v1/models``:
``n_ctx_train``, ``size``; ``GET /props``: the ``n_ctx`` it runs with), the Anthropic
models API (``max_input_tokens``) and any OpenAI-compatible ``/v1/models`` entry with a
``context_length`` / ``max_context_length`` field. Nothing here raises for a server that
does not say: the value stays None ("unknown").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger(__name__)

_CONTEXT_FIELDS = (
    "loaded_context_length",  # LM Studio: what the loaded instance takes
    "context_length",  # OpenRouter-style and several OpenAI-compatible servers
    "max_context_length",  # LM Studio: what the model could take
    "max_input_tokens",  # the Anthropic models API
    "context_window",
)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    size: int | None = None  # bytes on disk
    context_length: int | None = None  # tokens
    tools: bool | None = None  # takes tool calls; None: the server does not say

    @property
    def tool_text(self) -> str:
        if self.tools is None:
            return "tool calls: unknown"
        return "tool calls" if self.tools else "no tool calls (chat only)"

    @property
    def said(self) -> bool:
        """Did the server say anything of the model beyond its name?"""
        return bool(self.size or self.context_length or self.tools is not None)

    @property
    def detail_text(self) -> str:
        """``1.6 GB · context 8,192 tokens · no tool calls (chat only)``"""
        parts = [size_text(self.size)] if self.size else []
        if self.context_length:
            parts.append(f"context {self.context_length:,} tokens")
        parts.append(self.tool_text)
        return " · ".join(parts)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


def from_listing(entry: Mapping[str, Any]) -> ModelInfo | None:
    """One entry of a ``/v1/models`` (or LM Studio ``/api/v0/models``, Anthropic
    ``/v1/models``) answer."""
    model_id = entry.get("id")
    if not isinstance(model_id, str) or not model_id:
        return None
    context = next((_int(entry.get(k)) for k in _CONTEXT_FIELDS if _int(entry.get(k))), None)
    size = _int(entry.get("size"))
    meta = entry.get("meta")  # llama.cpp
    if isinstance(meta, dict):
        context = context or _int(meta.get("n_ctx_train"))
        size = size or _int(meta.get("size"))
    tools: bool | None = None
    caps = entry.get("capabilities")
    if isinstance(caps, list) and "tool_use" in caps:  # LM Studio names only what it has
        tools = True
    return ModelInfo(model_id, size, context, tools)


async def _json(client: httpx2.AsyncClient, method: str, url: str, **kw: Any) -> Any:
    import httpx2

    try:
        response = await client.request(method, url, **kw)
        return response.json() if response.status_code == 200 else None
    except (httpx2.HTTPError, ValueError, OSError):
        return None


async def _ollama(
    client: httpx2.AsyncClient, root: str, ids: Iterable[str]
) -> dict[str, ModelInfo] | None:
    tags = await _json(client, "GET", f"{root}/api/tags")
    if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
        return None
    sizes = {
        str(m.get("name") or m.get("model")): _int(m.get("size"))
        for m in tags["models"]
        if isinstance(m, dict)
    }

    async def show(name: str) -> ModelInfo:
        data = await _json(client, "POST", f"{root}/api/show", json={"model": name})
        context = tools = None
        if isinstance(data, dict):
            info = data.get("model_info")
            if isinstance(info, dict):
                context = next(
                    (_int(v) for k, v in info.items() if str(k).endswith(".context_length")),
                    None,
                )
            caps = data.get("capabilities")
            if isinstance(caps, list):  # Ollama lists every capability a model has
                tools = "tools" in caps
        return ModelInfo(name, sizes.get(name), context, tools)

    shown = await asyncio.gather(*(show(i) for i in ids))
    return {m.id: m for m in shown}


async def _lmstudio(client: httpx2.AsyncClient, root: str) -> dict[str, ModelInfo] | None:
    data = await _json(client, "GET", f"{root}/api/v0/models")
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    found = (from_listing(m) for m in data["data"] if isinstance(m, dict))
    return {m.id: m for m in found if m is not None}


async def _llamacpp_context(client: httpx2.AsyncClient, root: str) -> int | None:
    props = await _json(client, "GET", f"{root}/props")
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    if isinstance(settings, dict) and _int(settings.get("n_ctx")):
        return _int(settings.get("n_ctx"))
    return _int(props.get("n_ctx"))


async def local_details(
    client: httpx2.AsyncClient, root: str, listing: Any
) -> tuple[ModelInfo, ...]:
    """Each model of a local server's ``/v1/models`` answer (``listing``) with what the
    server says about it; ``root`` is the server without ``/v1``."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    listed = [from_listing(m) for m in entries or () if isinstance(m, dict)]
    models = {m.id: m for m in listed if m is not None}
    if not models:
        return ()
    own = await _ollama(client, root, sorted(models))
    if own is None:
        own = await _lmstudio(client, root)
    if own is None and any(isinstance(m.get("meta"), dict) for m in entries or ()):
        running = await _llamacpp_context(client, root)  # what it runs with, not trained
        if running:
            own = {i: replace(m, context_length=running) for i, m in models.items()}
    out = []
    for model_id in sorted(models):
        base, more = models[model_id], (own or {}).get(model_id)
        if more is not None:
            base = ModelInfo(
                model_id,
                more.size or base.size,
                more.context_length or base.context_length,
                more.tools if more.tools is not None else base.tools,
            )
        out.append(base)
    return tuple(out)


def size_text(size: int | None) -> str:
    """``4.9 GB`` (decimal units, as the model servers show them)."""
    if size is None:
        return ""
    for unit, step in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= step:
            return f"{size / step:.1f} {unit}"
    return f"{size} B"
