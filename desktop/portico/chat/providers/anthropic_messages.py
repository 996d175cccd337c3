"""The ``anthropic`` kind: the Messages API."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator, Mapping, Sequence
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

DEFAULT_URL = "https://api.anthropic.com"
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "end_turn",
    "stop_sequence": "end_turn",
    "pause_turn": "end_turn",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


def _image(image: ModelImage) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": image.mime_type,
            "data": base64.b64encode(image.data).decode(),
        },
    }


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}] if text else []


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Anthropic wants user/assistant alternation: consecutive user content is merged."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            blocks = [{"type": "text", "text": "(empty)"}]
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for turn in request.turns:
        if isinstance(turn, UserTurn):
            add("user", _text(turn.text) + [_image(i) for i in turn.images])
        elif isinstance(turn, AssistantTurn) and turn.native and turn.native_kind == "anthropic":
            add("assistant", [dict(block) for block in turn.native])  # as it came, unchanged
        elif isinstance(turn, AssistantTurn):
            blocks = _text(turn.text)
            blocks += [
                {
                    "type": "tool_use",
                    "id": tool_id(c.id),
                    "name": c.name,
                    "input": dict(c.arguments),
                }
                for c in turn.calls
            ]
            add("assistant", blocks)
        else:
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_id(r.id),
                        "content": _text(r.text or "(no output)") + [_image(i) for i in r.images],
                        "is_error": r.is_error,
                    }
                    for r in turn.results
                ],
            )
    return out


TOOL_SEARCH_TYPE = "tool_search_tool_bm25_20251119"  # the Messages API's own tool search
TOOL_SEARCH_NAME = "tool_search_tool_bm25"


def to_tools(request: ModelRequest) -> list[dict[str, Any]]:
    """The tools as the Messages API takes them. With ``native_search`` the API's tool
    search tool goes first and every deferred tool is sent with ``defer_loading``: the
    model sees only the others until a search loads one."""
    tools: list[dict[str, Any]] = []
    if request.native_search and any(t.deferred for t in request.tools):
        tools.append({"type": TOOL_SEARCH_TYPE, "name": TOOL_SEARCH_NAME})
    for t in request.tools:
        tool: dict[str, Any] = {
            "name": t.name,
            "description": t.description,
            "input_schema": dict(t.input_schema) or {"type": "object"},
        }
        if request.native_search and t.deferred:
            tool["defer_loading"] = True
        tools.append(tool)
    return tools


def _started(block: Any) -> dict[str, Any]:
    """A content block as it starts streaming, in the shape it is sent back."""
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text or ""}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking or "", "signature": ""}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
    if kind == "server_tool_use":
        return {"type": "server_tool_use", "id": block.id, "name": block.name, "input": {}}
    # redacted_thinking (its opaque data), tool_search_tool_result, ...: whole at start
    dumped: dict[str, Any] = block.to_dict(mode="json", exclude_none=True)
    return dumped


def loaded_by_search(native: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tool names a response's tool search results referenced (they are loaded)."""
    names: list[str] = []
    for block in native:
        if block.get("type") != "tool_search_tool_result":
            continue
        result = block.get("content")
        if isinstance(result, Mapping):
            for ref in result.get("tool_references") or ():
                if isinstance(ref, Mapping) and isinstance(ref.get("tool_name"), str):
                    names.append(ref["tool_name"])
    return names


_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def tool_id(call_id: str) -> str:
    """A call id as the Messages API takes it (``^[a-zA-Z0-9_-]+$``). Another provider's
    id (a chat that switched models, a local server's ``call.1:0``) is made to fit, the
    same way for its tool_use and its tool_result."""
    if _TOOL_ID.match(call_id):
        return call_id
    import hashlib

    digest = hashlib.sha256(call_id.encode()).hexdigest()[:12]
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', call_id)[:40]}_{digest}"


class AnthropicClient:
    kind = "anthropic"

    def __init__(self, spec: ProviderSpec, api_key: str | None, *, http_client: Any = None):
        import anthropic
        import httpx2

        self.name = spec.name
        self.spec = spec
        self.base_url = spec.base_url or DEFAULT_URL
        self._http = http_client or httpx2.AsyncClient(timeout=httpx2.Timeout(600.0, connect=10.0))
        self._client = anthropic.AsyncAnthropic(
            base_url=self.base_url,
            api_key=api_key or "no-key",  # a local server may take none; the SDK wants one
            max_retries=0,
            http_client=self._http,
            default_headers=spec.headers_dict or None,
        )
        self._listed: list[str] | None = None

    def _error(self, exc: BaseException, model: str) -> errors.ProviderError:
        return errors.describe(
            exc,
            provider=self.name,
            kind="anthropic",
            model=model,
            base_url=self.base_url,
            models=self._listed or (),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamPart]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": to_messages(request),
            "stream": True,
        }
        if request.system:
            kwargs["system"] = request.system
        if request.temperature is not None:
            kwargs["extra_body"] = {"temperature": request.temperature}
        if request.thinking_budget is not None:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
        if request.tools:
            kwargs["tools"] = to_tools(request)
        text: list[str] = []
        thinking: list[str] = []
        blocks: dict[int, dict[str, str]] = {}
        content: dict[int, dict[str, Any]] = {}  # every block of the answer, by index
        args: dict[int, str] = {}  # a server tool's streamed input
        stop = "end_turn"
        usage = [0, 0]
        model = request.model
        events = 0
        ended = False  # message_stop: the API's end of the answer
        try:
            stream = await self._client.messages.create(**kwargs)
            async with stream:
                async for event in stream:
                    events += 1
                    kind = event.type
                    if kind == "message_start":
                        model = event.message.model or model
                        usage[0] = event.message.usage.input_tokens or 0
                        usage[1] = event.message.usage.output_tokens or 0
                    elif kind == "content_block_start":
                        block = event.content_block
                        content[event.index] = _started(block)
                        if block.type == "tool_use":
                            blocks[event.index] = {"id": block.id, "name": block.name, "args": ""}
                            yield StreamToolDelta(event.index, block.id, block.name, "")
                        elif block.type == "thinking" and block.thinking:
                            thinking.append(block.thinking)
                            yield StreamReasoning(block.thinking)
                    elif kind == "content_block_delta":
                        delta = event.delta
                        held = content.get(event.index)
                        if delta.type == "text_delta":
                            text.append(delta.text)
                            if held is not None:
                                held["text"] = held.get("text", "") + delta.text
                            yield StreamText(delta.text)
                        elif delta.type == "input_json_delta":
                            slot = blocks.get(event.index)
                            if slot is not None:
                                slot["args"] += delta.partial_json
                                yield StreamToolDelta(event.index, None, None, delta.partial_json)
                            else:  # a server tool's input (tool search's query)
                                args[event.index] = args.get(event.index, "") + delta.partial_json
                        elif delta.type == "thinking_delta":
                            thinking.append(delta.thinking)
                            if held is not None:
                                held["thinking"] = held.get("thinking", "") + delta.thinking
                            yield StreamReasoning(delta.thinking)
                        elif delta.type == "signature_delta" and held is not None:
                            held["signature"] = held.get("signature", "") + delta.signature
                    elif kind == "message_stop":
                        ended = True
                    elif kind == "message_delta":
                        stop = event.delta.stop_reason or stop
                        if event.usage is not None and event.usage.output_tokens is not None:
                            usage[1] = event.usage.output_tokens
                        input_tokens = getattr(event.usage, "input_tokens", None)
                        if input_tokens:
                            usage[0] = input_tokens
        except Exception as exc:
            if events and type(exc).__name__ == "APIConnectionError":  # broke mid-answer
                arrived = sum(map(len, text))
                raise errors.truncated(f"'{self.name}/{model}'", self.base_url, arrived) from None
            if getattr(exc, "status_code", None) == 404 and errors.looks_like_api(exc):
                try:
                    self._listed = await self.list_models()
                except errors.ProviderError:
                    self._listed = None
            raise self._error(exc, request.model) from None
        if events == 0:
            raise errors.ProviderError(
                f"{self.base_url} answered without any Messages API events ({self.name}): it "
                "does not look like the Anthropic API. Check base_url.",
                kind="incompatible",
            )
        if events and not ended:
            where = f"'{self.name}/{model}'"
            raise errors.truncated(where, self.base_url, sum(map(len, text)))
        calls = []
        for index in sorted(blocks):
            slot = blocks[index]
            raw = slot["args"] or "{}"
            arguments, _problem = parse_arguments(raw)
            calls.append(CallRequest(slot["id"], slot["name"], arguments, raw))
            if index in content:
                content[index]["input"] = arguments
        for index, raw in args.items():
            if index in content:
                content[index]["input"] = parse_arguments(raw)[0]
        ordered = [content[i] for i in sorted(content)]
        native = any(b.get("type") not in ("text", "tool_use") for b in ordered)
        yield StreamDone(
            text="".join(text),
            calls=tuple(calls),
            stop_reason=_STOP.get(stop, "end_turn"),
            input_tokens=usage[0],
            output_tokens=usage[1],
            model=model,
            thinking="".join(thinking),
            native=tuple(ordered) if native else (),
            native_kind="anthropic" if native else "",
        )

    async def list_models(self) -> list[str]:
        try:
            page = await self._client.models.list()
            return sorted(m.id for m in page.data)
        except Exception as exc:
            raise self._error(exc, "") from None

    async def context_length(self, model: str) -> int | None:
        """``max_input_tokens`` of the models API's entry for ``model`` (None: unknown)."""
        from portico.chat.model_info import from_listing

        entry = await self._client.get(f"/v1/models/{model}", cast_to=object)
        info = from_listing(entry) if isinstance(entry, dict) else None
        return info.context_length if info is not None else None

    async def aclose(self) -> None:
        await self._client.close()
