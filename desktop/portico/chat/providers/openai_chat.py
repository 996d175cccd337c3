"""The ``openai`` kind: Chat Completions on any OpenAI-compatible server."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

from portico.chat.events import StopReason
from portico.chat.providers import errors
from portico.chat.providers.wire import (
    AssistantTurn,
    CallRequest,
    ModelImage,
    ModelRequest,
    StreamDone,
    StreamPart,
    StreamReasoning,
    StreamText,
    StreamToolDelta,
    UserTurn,
    parse_arguments,
)
from portico.config.model import ProviderSpec

DEFAULT_URL = "https://api.openai.com/v1"
_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "end_turn",
    "function_call": "end_turn",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _data_url(image: ModelImage) -> dict[str, Any]:
    encoded = base64.b64encode(image.data).decode()
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{encoded}"}}


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for turn in request.turns:
        if isinstance(turn, UserTurn):
            if turn.images:
                parts: list[dict[str, Any]] = [{"type": "text", "text": turn.text}]
                parts += [_data_url(i) for i in turn.images]
                out.append({"role": "user", "content": parts})
            else:
                out.append({"role": "user", "content": turn.text})
        elif isinstance(turn, AssistantTurn):
            message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
            if turn.calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.raw_arguments or json.dumps(dict(c.arguments)),
                        },
                    }
                    for c in turn.calls
                ]
            elif not turn.text:
                message["content"] = ""
            out.append(message)
        else:
            images: list[dict[str, Any]] = []
            for result in turn.results:
                out.append({"role": "tool", "tool_call_id": result.id, "content": result.text})
                if result.images:
                    images.append({"type": "text", "text": f"Images returned by {result.name}:"})
                    images += [_data_url(i) for i in result.images]
            if images:  # tool messages carry text only: images follow as a user message
                out.append({"role": "user", "content": images})
    return out


def to_tools(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.input_schema) or {"type": "object", "properties": {}},
            },
        }
        for t in request.tools
    ]


class OpenAIClient:
    kind = "openai"

    def __init__(self, spec: ProviderSpec, api_key: str | None, *, http_client: Any = None):
        import httpx2
        import openai

        self.name = spec.name
        self.spec = spec
        self.base_url = spec.base_url or DEFAULT_URL
        self._http = http_client or httpx2.AsyncClient(timeout=httpx2.Timeout(600.0, connect=10.0))
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "no-key",  # local servers take none; the SDK insists on one
            max_retries=0,
            http_client=self._http,
            default_headers=spec.headers_dict or None,
        )
        self._listed: list[str] | None = None

    def _error(self, exc: BaseException, model: str) -> errors.ProviderError:
        return errors.describe(
            exc,
            provider=self.name,
            kind="openai",
            model=model,
            base_url=self.base_url,
            models=self._listed or (),
        )

    async def _fail(self, exc: BaseException, model: str) -> errors.ProviderError:
        if getattr(exc, "status_code", None) == 404 and errors.looks_like_api(exc):
            try:
                self._listed = await self.list_models()
            except errors.ProviderError:
                self._listed = None
        return self._error(exc, model)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamPart]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": to_messages(request),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if "api.openai.com" in self.base_url:
            kwargs["max_completion_tokens"] = request.max_tokens
        else:
            kwargs["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.reasoning_effort is not None:
            kwargs["reasoning_effort"] = request.reasoning_effort
        if request.tools:
            kwargs["tools"] = to_tools(request)
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage = (0, 0)
        model = request.model
        chunks = 0
        from openai import AsyncStream  # loaded in __init__ already (kept off start-up)
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        try:
            # The SDK's create() re-validates every message through its TypedDicts, which
            # costs ~2 ms per message per request; the body here is already plain JSON.
            stream = await self._client.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=kwargs,
                options={"security": {"bearer_auth": True}},
                stream=True,
                stream_cls=AsyncStream[ChatCompletionChunk],
            )
            async with stream:
                async for chunk in stream:
                    chunks += 1
                    if getattr(chunk, "model", None):
                        model = chunk.model
                    if chunk.usage is not None:
                        usage = (chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                    for choice in chunk.choices or ():
                        delta = choice.delta
                        if choice.finish_reason:
                            finish = choice.finish_reason
                        if delta is None:
                            continue
                        reasoning = getattr(delta, "reasoning_content", None) or getattr(
                            delta, "reasoning", None
                        )
                        if isinstance(reasoning, str) and reasoning:
                            yield StreamReasoning(reasoning)
                        if delta.content:
                            text.append(delta.content)
                            yield StreamText(delta.content)
                        for tc in delta.tool_calls or ():
                            slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                            fn = tc.function
                            if tc.id:
                                slot["id"] = tc.id
                            if fn is not None and fn.name:
                                slot["name"] += fn.name
                            piece = (fn.arguments or "") if fn is not None else ""
                            slot["args"] += piece
                            yield StreamToolDelta(
                                tc.index, tc.id, fn.name if fn is not None else None, piece
                            )
        except Exception as exc:
            if chunks and type(exc).__name__ == "APIConnectionError":  # broke mid-answer
                arrived = sum(map(len, text))
                raise errors.truncated(f"'{self.name}/{model}'", self.base_url, arrived) from None
            raise await self._fail(exc, request.model) from None
        if chunks and finish is None:  # every answer ends with a finish_reason
            where = f"'{self.name}/{model}'"
            raise errors.truncated(where, self.base_url, sum(map(len, text)))
        if chunks == 0:
            raise errors.ProviderError(
                f"{self.base_url} answered without a single completion chunk ({self.name}): it "
                "does not look like an OpenAI-compatible server. Check base_url (it usually "
                "ends in /v1).",
                kind="incompatible",
            )
        requests = []
        for index in sorted(calls):
            slot = calls[index]
            arguments, _problem = parse_arguments(slot["args"])
            requests.append(
                CallRequest(slot["id"] or f"call_{index}", slot["name"], arguments, slot["args"])
            )
        yield StreamDone(
            text="".join(text),
            calls=tuple(requests),
            stop_reason=_STOP.get(finish or "stop", "end_turn"),
            input_tokens=usage[0],
            output_tokens=usage[1],
            model=model,
        )

    async def list_models(self) -> list[str]:
        try:
            page = await self._client.models.list()
            return sorted(m.id for m in page.data)
        except Exception as exc:
            raise self._error(exc, "") from None

    async def context_length(self, model: str) -> int | None:
        """What the server's model list says of ``model``'s context (None: nothing); a
        local server's own API is asked too (``portico.chat.model_info``)."""
        from portico.chat.model_info import from_listing, local_details

        listing = await self._client.get("/models", cast_to=object)
        entries = listing.get("data") if isinstance(listing, dict) else None
        for entry in entries or ():
            if isinstance(entry, dict) and entry.get("id") == model:
                info = from_listing(entry)
                if info is not None and info.context_length:
                    return info.context_length
        if "api.openai.com" in self.base_url:
            return None
        root = self.base_url.removesuffix("/").removesuffix("/v1")
        for info in await local_details(self._http, root, listing):
            if info.id == model:
                return info.context_length
        return None

    async def aclose(self) -> None:
        await self._client.close()
