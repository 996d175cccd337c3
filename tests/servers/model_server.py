"""A scripted model server: the OpenAI Chat Completions and Anthropic Messages HTTP APIs
on 127.0.0.1, answering from a script and recording every request it received.

In a test (a real uvicorn server on a thread; the SDKs talk to it over sockets)::

    with ModelServer() as server:
        server.script(text("Hello"), tool_call("everything__get-sum", {"a": 2, "b": 40}))
        ...  # base URLs: server.openai_url ("/v1"), server.anthropic_url
        server.requests  # what arrived (path, headers, JSON body)

As a process: ``python tests/servers/model_server.py --port N [--script FILE.json]``;
``POST /_script`` (a JSON list of replies) and ``GET /_requests`` drive it from outside.

A reply is a dict (see the helper functions below):
  {"text": "...", "chunks": [...]}        text, streamed in ``chunks`` (default: by word)
  {"tool_calls": [{"name", "arguments"}]} one or more calls (``arguments`` a dict, or a
                                         string sent as is: bad JSON for a bad-argument test)
  {"status": 401|404|429|500, ...}        an error in the API's own shape
                                         (``retry_after`` adds the header on 429)
  {"context_too_long": {"tokens": N, "limit": M}}   the API's own error; on the OpenAI
                                         route ``"shape": "llamacpp"`` or ``"ollama"`` answers
                                         as those servers do
  {"thinking": "..."}                    (Anthropic) a thinking block with its signature
                                         first; {"redacted_thinking": "DATA"} a redacted one
  {"reasoning": "...", "reasoning_field": F}   (OpenAI route) the reasoning streams first,
                                         word by word, in the delta's field F:
                                         "reasoning_content" (DeepSeek, llama.cpp, vLLM; the
                                         default) or "reasoning" (OpenRouter, Ollama)
  {"tool_search": {"query", "found"}}    (Anthropic) the API's tool search ran first:
                                         server_tool_use + tool_search_tool_result blocks
  {"local_refusal": SHAPE}               (OpenAI route) a local server's own refusal:
                                         "ollama_no_tools", "ollama_not_found",
                                         "llamacpp_no_jinja", "lmstudio_not_loaded"
  {"not_an_api": true}                    200 with an HTML page (not OpenAI-compatible)
  {"text": ..., "truncate_after": N}      the stream ends cleanly after N text chunks,
                                         without the API's end (no finish_reason and no
                                         [DONE]; no message_delta / message_stop)
  "delay": seconds between stream chunks; "first_delay": before the first one
  "stop_reason": "length"/"max_tokens" to cut the answer; "usage": {"input", "output"}
When the script runs out, the ``default`` reply answers (text "ok" unless set).

The Messages route checks what the real API checks before it answers (400
``invalid_request_error`` otherwise): with thinking on, the assistant message before a
tool result starts with its thinking block, and every thinking block carries the
signature it was given; a deferred tool (``defer_loading``) needs the tool search tool.
The Chat Completions route refuses, as DeepSeek's API does, an input message carrying
``reasoning_content`` (or ``reasoning``): the reasoning is never sent back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Reply = dict[str, Any]
MODELS = ("gpt-test", "vision-test", "claude-test")


def text(content: str, **extra: Any) -> Reply:
    return {"text": content, **extra}


def tool_call(name: str, arguments: dict[str, Any] | str, **extra: Any) -> Reply:
    return {"tool_calls": [{"name": name, "arguments": arguments}], **extra}


def tool_calls(*calls: tuple[str, dict[str, Any] | str], **extra: Any) -> Reply:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls], **extra}


def error(status: int, message: str = "", **extra: Any) -> Reply:
    return {"status": status, "message": message, **extra}


@dataclass
class Received:
    path: str
    method: str
    headers: dict[str, str]
    body: dict[str, Any]
    time: float

    @property
    def api(self) -> str:
        return "anthropic" if self.path.endswith("/messages") else "openai"


class Script:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.default: Reply = text("ok")
        self.requests: list[Received] = []
        self.models: tuple[str, ...] = MODELS
        # model -> its context: listed as OpenRouter-style servers do (context_length in
        # /v1/models) and as the Anthropic models API does (max_input_tokens)
        self.contexts: dict[str, int] = {}
        self.lock = threading.Lock()

    def next(self) -> Reply:
        with self.lock:
            return self.replies.pop(0) if self.replies else dict(self.default)


def _chunks(reply: Reply) -> list[str]:
    if "chunks" in reply:
        return list(reply["chunks"])
    words = str(reply.get("text", "")).split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)] if words != [""] else []


def _arguments_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _usage(reply: Reply, body: dict[str, Any]) -> tuple[int, int]:
    usage = reply.get("usage") or {}
    prompt = int(usage.get("input", max(1, len(json.dumps(body.get("messages", []))) // 4)))
    output = int(usage.get("output", max(1, len(str(reply.get("text", ""))) // 4)))
    return prompt, output


async def _pace(reply: Reply, index: int) -> None:
    delay = float(reply.get("first_delay", 0.0)) if index == 0 else 0.0
    delay += float(reply.get("delay", 0.0))
    if delay:
        await asyncio.sleep(delay)


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# --- errors ---------------------------------------------------------------------------

_OPENAI_TYPES = {
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", None),
}
_ANTHROPIC_TYPES = {
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _local_refusal(shape: str, model: str) -> Response:
    """What a local server answers on its OpenAI-compatible route (its own words and
    status, as its source writes them) for: a model without tool calls sent tools, a
    model not pulled / not loaded."""
    if shape == "ollama_no_tools":  # server/routes.go: the capability check, 400
        status, kind, message = 400, "invalid_request_error", f'"{model}" does not support tools'
    elif shape == "ollama_not_found":  # a model not pulled: 404
        status, kind = 404, "not_found_error"
        message = f'model "{model}" not found, try pulling it first'
    elif shape == "llamacpp_no_jinja":  # tools to llama-server without --jinja: a 500
        body = {
            "error": {
                "code": 500,
                "message": "tools param requires --jinja flag",
                "type": "server_error",
            }
        }
        return JSONResponse(body, status_code=500)
    elif shape == "lmstudio_not_loaded":  # JIT loading off and no model loaded
        status, kind = 400, "invalid_request_error"
        message = (
            "No models loaded. Please load a model in the developer page or use the "
            "`lms load` command."
        )
    else:
        raise ValueError(f"unknown local_refusal shape {shape!r}")
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status)


def _error_response(reply: Reply, api: str, model: str) -> Response | None:
    headers: dict[str, str] = {}
    if "local_refusal" in reply:
        return _local_refusal(str(reply["local_refusal"]), model)
    if "context_too_long" in reply:
        info = reply["context_too_long"]
        status = 400
        shape = info.get("shape")
        if api == "openai" and shape == "llamacpp":  # llama.cpp's server
            body = {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": info["tokens"],
                    "n_ctx": info["limit"],
                }
            }
            return JSONResponse(body, status_code=status)
        if api == "openai" and shape == "ollama":  # Ollama's OpenAI-compatible API
            body = {
                "error": {
                    "message": "the input length exceeds the context length",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            }
            return JSONResponse(body, status_code=status)
        if api == "openai":
            message = (
                f"This model's maximum context length is {info['limit']} tokens. However, "
                f"your messages resulted in {info['tokens']} tokens. Please reduce the "
                "length of the messages."
            )
            body: dict[str, Any] = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        else:
            message = f"prompt is too long: {info['tokens']} tokens > {info['limit']} maximum"
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        return JSONResponse(body, status_code=status)
    if "status" not in reply:
        return None
    status = int(reply["status"])
    if reply.get("retry_after") is not None:
        headers["retry-after"] = str(reply["retry_after"])
    message = reply.get("message") or {
        401: "Incorrect API key provided.",
        404: f"The model `{model}` does not exist or you do not have access to it.",
        429: "Rate limit reached. Please try again later.",
        500: "The server had an error while processing your request.",
    }.get(status, "error")
    if api == "openai":
        kind, code = _OPENAI_TYPES.get(status, ("server_error", None))
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    else:
        body = {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
        }
    return JSONResponse(body, status_code=status, headers=headers)


# --- OpenAI Chat Completions -----------------------------------------------------------


def _openai_stop(reply: Reply) -> str:
    if reply.get("stop_reason"):
        return {"max_tokens": "length"}.get(reply["stop_reason"], reply["stop_reason"])
    return "tool_calls" if reply.get("tool_calls") else "stop"


def _openai_calls(reply: Reply, base: int) -> list[dict[str, Any]]:
    return [
        {
            "id": call.get("id") or f"call_{base}_{i}",
            "type": "function",
            "function": {"name": call["name"], "arguments": _arguments_text(call["arguments"])},
        }
        for i, call in enumerate(reply.get("tool_calls") or [])
    ]


async def _openai_stream(reply: Reply, body: dict[str, Any], number: int) -> AsyncIterator[bytes]:
    model = body.get("model", "")
    base = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    index = 0
    await _pace(reply, index)
    yield chunk({"role": "assistant", "content": ""})
    if reply.get("reasoning"):
        field = str(reply.get("reasoning_field") or "reasoning_content")
        words = str(reply["reasoning"]).split(" ")
        for i, word in enumerate(words):
            await _pace(reply, index := index + 1)
            yield chunk({field: word if i == 0 else " " + word, "content": None})
    cut = reply.get("truncate_after")
    for piece in _chunks(reply):
        if cut is not None and index >= cut:
            return
        await _pace(reply, index := index + 1)
        yield chunk({"content": piece})
    for i, call in enumerate(_openai_calls(reply, number)):
        await _pace(reply, index := index + 1)
        args = call["function"]["arguments"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        half = len(args) // 2
        for part in (args[:half], args[half:]):
            if part:
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
    yield chunk({}, _openai_stop(reply))
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt, output = _usage(reply, body)
        yield _sse(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": output,
                    "total_tokens": prompt + output,
                },
            }
        )
    yield b"data: [DONE]\n\n"


def _openai_complete(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    prompt, output = _usage(reply, body)
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
    calls = _openai_calls(reply, number)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": _openai_stop(reply)}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        },
    }


# --- Anthropic Messages ----------------------------------------------------------------


def _anthropic_stop(reply: Reply) -> str:
    if reply.get("stop_reason"):
        return {"length": "max_tokens"}.get(reply["stop_reason"], reply["stop_reason"])
    return "tool_use" if reply.get("tool_calls") else "end_turn"


async def _anthropic_stream(
    reply: Reply, body: dict[str, Any], number: int
) -> AsyncIterator[bytes]:
    prompt, output = _usage(reply, body)
    index = 0
    await _pace(reply, index)
    yield _sse(
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", ""),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": prompt, "output_tokens": 1},
            },
        },
        "message_start",
    )
    block = 0
    for start, deltas in _anthropic_leading_blocks(reply, number):
        yield _sse(
            {"type": "content_block_start", "index": block, "content_block": start},
            "content_block_start",
        )
        for delta in deltas:
            await _pace(reply, index := index + 1)
            yield _sse(
                {"type": "content_block_delta", "index": block, "delta": delta},
                "content_block_delta",
            )
        yield _sse({"type": "content_block_stop", "index": block}, "content_block_stop")
        block += 1
    pieces = _chunks(reply)
    if pieces:
        yield _sse(
            {
                "type": "content_block_start",
                "index": block,
                "content_block": {"type": "text", "text": ""},
            },
            "content_block_start",
        )
        cut = reply.get("truncate_after")
        for piece in pieces:
            if cut is not None and index >= cut:
                return
            await _pace(reply, index := index + 1)
            yield _sse(
                {
                    "type": "content_block_delta",
                    "index": block,
                    "delta": {"type": "text_delta", "text": piece},
                },
                "content_block_delta",
            )
        yield _sse({"type": "content_block_stop", "index": block}, "content_block_stop")
        block += 1
    for i, call in enumerate(reply.get("tool_calls") or []):
        await _pace(reply, index := index + 1)
        yield _sse(
            {
                "type": "content_block_start",
                "index": block,
                "content_block": {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_{number}_{i}",
                    "name": call["name"],
                    "input": {},
                },
            },
            "content_block_start",
        )
        args = _arguments_text(call["arguments"])
        half = len(args) // 2
        for part in (args[:half], args[half:]):
            if part:
                yield _sse(
                    {
                        "type": "content_block_delta",
                        "index": block,
                        "delta": {"type": "input_json_delta", "partial_json": part},
                    },
                    "content_block_delta",
                )
        yield _sse({"type": "content_block_stop", "index": block}, "content_block_stop")
        block += 1
    yield _sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": _anthropic_stop(reply), "stop_sequence": None},
            "usage": {"output_tokens": output},
        },
        "message_delta",
    )
    yield _sse({"type": "message_stop"}, "message_stop")


def sign(thinking: str) -> str:
    """The signature this server gives a thinking block (and checks when it comes back)."""
    import hashlib

    return "sig" + hashlib.sha256(thinking.encode()).hexdigest()[:24]


def _anthropic_leading_blocks(
    reply: Reply, number: int
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(content_block_start's block, its deltas) of what streams before the text."""
    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if reply.get("thinking"):
        thought = str(reply["thinking"])
        words = thought.split(" ")
        deltas: list[dict[str, Any]] = [
            {"type": "thinking_delta", "thinking": w if i == 0 else " " + w}
            for i, w in enumerate(words)
        ]
        deltas.append({"type": "signature_delta", "signature": sign(thought)})
        out.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if reply.get("redacted_thinking"):
        out.append(({"type": "redacted_thinking", "data": str(reply["redacted_thinking"])}, []))
    search = reply.get("tool_search")
    if search:
        use_id = f"srvtoolu_{number}"
        query = json.dumps({"query": search["query"]})
        out.append(
            (
                {
                    "type": "server_tool_use",
                    "id": use_id,
                    "name": "tool_search_tool_bm25",
                    "input": {},
                },
                [{"type": "input_json_delta", "partial_json": query}],
            )
        )
        references = [{"type": "tool_reference", "tool_name": n} for n in search["found"]]
        out.append(
            (
                {
                    "type": "tool_search_tool_result",
                    "tool_use_id": use_id,
                    "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": references,
                    },
                },
                [],
            )
        )
    return out


def _invalid(message: str) -> Response:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return JSONResponse(body, status_code=400)


def anthropic_check(body: dict[str, Any]) -> Response | None:
    """What the Messages API refuses before it answers (the real messages, abridged)."""
    messages = body.get("messages") or []
    for m, message in enumerate(messages):
        content = message.get("content")
        for b, block in enumerate(content if isinstance(content, list) else ()):
            if block.get("type") == "thinking" and block.get("signature") != sign(
                str(block.get("thinking", ""))
            ):
                return _invalid(
                    f"messages.{m}.content.{b}: Invalid `signature` in `thinking` block"
                )
    thinking = (body.get("thinking") or {}).get("type") == "enabled"
    last = messages[-1] if messages else {}
    last_content = last.get("content") if isinstance(last.get("content"), list) else []
    if thinking and any(b.get("type") == "tool_result" for b in last_content):
        at = len(messages) - 2
        before = messages[at] if at >= 0 else {}
        blocks = before.get("content") if isinstance(before.get("content"), list) else []
        first = blocks[0].get("type") if blocks else "nothing"
        if before.get("role") != "assistant" or first not in ("thinking", "redacted_thinking"):
            return _invalid(
                f"messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{first}`. When `thinking` is enabled, a final `assistant` "
                "message must start with a thinking block (preceeding the lastmost set of "
                "`tool_use` and `tool_result` blocks). We recommend you include thinking "
                "blocks from previous turns. To avoid this requirement, disable `thinking`."
            )
    tools = body.get("tools") or []
    searching = any(str(t.get("type", "")).startswith("tool_search_tool_") for t in tools)
    if any(t.get("defer_loading") for t in tools) and not searching:
        return _invalid(
            "tools: a tool with defer_loading requires a tool search tool "
            "(tool_search_tool_regex or tool_search_tool_bm25)"
        )
    return None


def openai_check(body: dict[str, Any]) -> Response | None:
    """What DeepSeek's Chat Completions refuses: reasoning sent back in the messages."""
    for m, message in enumerate(body.get("messages") or []):
        for key in ("reasoning_content", "reasoning"):
            if isinstance(message, dict) and key in message:
                error = {
                    "message": f"messages[{m}]: the `{key}` field must not be sent back "
                    "in input messages",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_request_error",
                }
                return JSONResponse({"error": error}, status_code=400)
    return None


def _anthropic_complete(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    prompt, output = _usage(reply, body)
    content: list[dict[str, Any]] = []
    if reply.get("text"):
        content.append({"type": "text", "text": reply["text"]})
    for i, call in enumerate(reply.get("tool_calls") or []):
        arguments = call["arguments"]
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{number}_{i}",
                "name": call["name"],
                "input": arguments if isinstance(arguments, dict) else {},
            }
        )
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": _anthropic_stop(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": output},
    }


# --- the app ----------------------------------------------------------------------------


def build_app(script: Script) -> Starlette:
    async def completions(request: Request) -> Response:
        return await answer(request, "openai")

    async def messages(request: Request) -> Response:
        return await answer(request, "anthropic")

    async def answer(request: Request, api: str) -> Response:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        with script.lock:
            script.requests.append(
                Received(request.url.path, request.method, dict(request.headers), body, time.time())
            )
            number = len(script.requests)
        refused = anthropic_check(body) if api == "anthropic" else openai_check(body)
        if refused is not None:
            return refused
        reply = script.next()
        if reply.get("not_an_api"):
            return HTMLResponse("<html><body>It works!</body></html>")
        failure = _error_response(reply, api, str(body.get("model", "")))
        if failure is not None:
            return failure
        if body.get("stream"):
            stream = (_openai_stream if api == "openai" else _anthropic_stream)(reply, body, number)
            return StreamingResponse(stream, media_type="text/event-stream")
        await _pace(reply, 0)
        make = _openai_complete if api == "openai" else _anthropic_complete
        return JSONResponse(make(reply, body, number))

    async def models(request: Request) -> Response:
        with script.lock:
            script.requests.append(
                Received(request.url.path, request.method, dict(request.headers), {}, time.time())
            )
            reply = script.replies[0] if script.replies else {}
        # a model list's error is scripted as such ({"status": 401, "at_models": True}): a
        # chat's first request also lists the models (for their context length), and must
        # not take the error scripted for its completion
        if reply.get("status") in (401, 500) and reply.get("at_models"):
            script.next()
            return _error_response(reply, "openai", "") or JSONResponse({})
        if reply.get("not_an_api"):
            script.next()
            return HTMLResponse("<html><body>It works!</body></html>")
        data = [
            {
                "id": m,
                "object": "model",
                "created": 0,
                "owned_by": "test",
                "type": "model",
                "display_name": m,
                "created_at": "2026-01-01T00:00:00Z",
            }
            for m in script.models
        ]
        for entry in data:
            if entry["id"] in script.contexts:
                entry["context_length"] = script.contexts[entry["id"]]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    async def one_model(request: Request) -> Response:
        """The Anthropic models API's GET /v1/models/{id}."""
        model = request.path_params["model"]
        with script.lock:
            script.requests.append(
                Received(request.url.path, request.method, dict(request.headers), {}, time.time())
            )
        if model not in script.models:
            return JSONResponse(
                {"type": "error", "error": {"type": "not_found_error", "message": model}}, 404
            )
        entry: dict[str, Any] = {
            "id": model,
            "type": "model",
            "display_name": model,
            "created_at": "2026-01-01T00:00:00Z",
        }
        if model in script.contexts:
            entry["max_input_tokens"] = script.contexts[model]
        return JSONResponse(entry)

    async def set_script(request: Request) -> Response:
        replies = await request.json()
        with script.lock:
            script.replies = list(replies)
        return JSONResponse({"replies": len(replies)})

    async def get_requests(request: Request) -> Response:
        with script.lock:
            return JSONResponse([r.__dict__ for r in script.requests])

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/chat/completions", completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model:path}", one_model, methods=["GET"]),
            Route("/models", models, methods=["GET"]),
            Route("/_script", set_script, methods=["POST"]),
            Route("/_requests", get_requests, methods=["GET"]),
        ]
    )


class ModelServer:
    """The server on a background thread (its own loop), on a free loopback port."""

    def __init__(self, port: int = 0) -> None:
        self.state = Script()
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are
        # TCP, and without it a reply's last small write waits ~40 ms for a delayed ACK
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(
            build_app(self.state), log_level="warning", lifespan="off", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="model-server", daemon=True)

    def _run(self) -> None:
        self._server.run(sockets=[self._sock])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.base_url

    def script(self, *replies: Reply) -> None:
        with self.state.lock:
            self.state.replies = list(replies)

    def set_default(self, reply: Reply) -> None:
        self.state.default = reply

    def set_models(self, models: Iterable[str]) -> None:
        self.state.models = tuple(models)

    @property
    def requests(self) -> list[Received]:
        with self.state.lock:
            return [r for r in self.state.requests if r.body or r.method == "POST"]

    @property
    def pending(self) -> int:
        with self.state.lock:
            return len(self.state.replies)

    def start(self) -> ModelServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the model server did not start within 10 s")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8770)
    parser.add_argument("--script", help="a JSON file with a list of replies")
    parser.add_argument("--default", help="a JSON reply used when the script runs out")
    args = parser.parse_args()
    server = ModelServer(args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as handle:
            server.script(*json.load(handle))
    if args.default:
        server.set_default(json.loads(args.default))
    server._run()


if __name__ == "__main__":
    main()
