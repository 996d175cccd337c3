"""Provider failures in plain words, each with what to do; never a traceback."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from portico.chat.events import FailureKind


class ProviderError(Exception):
    """One sentence a person can act on. ``retryable``: trying again may work."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind = "server",
        retryable: bool = False,
        retry_after: float | None = None,
        context_limit: int | None = None,
        context_used: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.retryable = retryable
        self.retry_after = retry_after
        # a context-length error: what the server said of its context and of the request
        self.context_limit = context_limit
        self.context_used = context_used

    @property
    def message(self) -> str:
        return str(self)


_CONTEXT = re.compile(
    r"context[_ ]length|context window|maximum context|prompt is too long|too many tokens|"
    r"reduce the length|context size|exceeds? the context|exceed_context_size",
    re.IGNORECASE,
)
# a model that takes no tool calls: Ollama's capability check ("MODEL" does not support
# tools, 400) and llama-server started without --jinja (a 500 for a permanent problem)
_NO_TOOLS = re.compile(
    r"does not support tools|(?:tools|tool_choice) param requires --jinja", re.IGNORECASE
)
# a local server with the model on disk but not in memory (LM Studio with JIT loading off)
_NOT_LOADED = re.compile(r"no models? (?:is )?loaded|model is (?:not loaded|unloaded)", re.I)
# llama.cpp's server says its figures as fields of the error
_CONTEXT_FIELDS = (("n_ctx", "n_prompt_tokens"),)
_TOKENS = re.compile(r"(\d[\d,]*)\s*tokens", re.IGNORECASE)
_LIMIT = re.compile(r"(?:maximum context length is|>)\s*(\d[\d,]*)", re.IGNORECASE)


def _body_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    message = getattr(exc, "message", None) or str(exc)
    return str(message)


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name in ("retry-after-ms", "retry-after"):
        value = headers.get(name)
        if not value:
            continue
        try:
            seconds = float(value)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                continue
            seconds = when.timestamp() - time.time()
        return max(0.0, seconds / 1000 if name.endswith("-ms") else seconds)
    return None


def looks_like_api(exc: Any) -> bool:
    """Did the server answer in a JSON error shape at all (not an HTML page)?"""
    body = getattr(exc, "body", None)
    return isinstance(body, Mapping)


def _body_fields(exc: Any) -> Mapping[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return inner
    return {}


def context_error(
    message: str, where: str, fields: Mapping[str, Any] | None = None
) -> ProviderError:
    """The provider's own "too long" answer: the turn is kept, and the way on is to leave
    older messages out (/compact, which the app offers as Summarise / Trim and retry)."""
    numbers = [int(n.replace(",", "")) for n in _TOKENS.findall(message)]
    limit_match = _LIMIT.search(message)
    limit = int(limit_match.group(1).replace(",", "")) if limit_match else None
    used = max((n for n in numbers if n != limit), default=None)
    fields = fields or {}
    for limit_key, used_key in _CONTEXT_FIELDS:
        if isinstance(fields.get(limit_key), int) and not isinstance(fields[limit_key], bool):
            limit = fields[limit_key]
        if isinstance(fields.get(used_key), int) and not isinstance(fields[used_key], bool):
            used = fields[used_key]
    detail = ""
    if used and limit:
        detail = f" ({used:,} tokens; the model takes {limit:,})"
    elif used:
        detail = f" ({used:,} tokens)"
    return ProviderError(
        f"The conversation is too long for {where}{detail}. Summarise the older messages "
        "(/compact summarise) or trim them (/compact trim), then retry; they stay in the "
        "chat. Or start a new chat (/new), or pick a model with a larger context.",
        kind="context",
        context_limit=limit,
        context_used=used,
    )


def no_tools(text: str, where: str, status: int) -> ProviderError:
    """The server refused the request's tools: the way on is another model, or (llama.cpp)
    the server restarted with its chat template on."""
    if "--jinja" in text:
        fix = (
            "Restart llama-server with --jinja (it then reads the model's tool-call "
            "template), or pick a model on a server that takes tools with /model"
        )
    else:
        fix = (
            "Pick a model that takes tool calls with /model (`portico model detect` says which do)"
        )
    return ProviderError(
        f"{where} does not take tool calls (HTTP {status}: {text}). {fix}, then retry; the "
        "question is kept.",
        kind="no_tools",
    )


def truncated(where: str, base_url: str, arrived: int) -> ProviderError:
    """The stream ended (or broke) before the API's end of the answer."""
    kept = f" the {arrived:,} characters that arrived are kept" if arrived else " nothing arrived"
    return ProviderError(
        f"The answer from {where} stopped before its end (the stream from {base_url} ended "
        f"early;{kept}). Retry to ask again; if it keeps happening, check the network or a "
        "proxy on the way.",
        kind="truncated",
        retryable=True,
    )


def describe(
    exc: BaseException,
    *,
    provider: str,
    kind: str,
    model: str,
    base_url: str,
    models: Sequence[str] = (),
) -> ProviderError:
    """Any SDK failure as a ProviderError in plain words. ``models``: what the server
    lists (used for an unknown model)."""
    if isinstance(exc, ProviderError):
        return exc
    where = f"'{provider}/{model}'" if model else f"'{provider}'"
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    text = _body_message(exc)
    if name == "APITimeoutError":
        return ProviderError(
            f"{base_url} did not answer in time ({provider}). Check that the server is "
            "running and reachable, then retry.",
            kind="network",
            retryable=True,
        )
    if name == "APIConnectionError":
        cause = exc.__cause__ or exc.__context__
        why = f" ({cause})" if cause and str(cause) else ""
        return ProviderError(
            f"Cannot reach {base_url} ({provider}){why}. Check that the server is running "
            "and the base_url is right, then retry.",
            kind="network",
            retryable=True,
        )
    if name in ("APIResponseValidationError", "JSONDecodeError") or (
        isinstance(status, int) and not looks_like_api(exc) and status in (404, 405, 200)
    ):
        return ProviderError(
            f"{base_url} does not answer like an {_api_name(kind)} API ({provider}). "
            "Check base_url (for OpenAI-compatible servers it usually ends in /v1).",
            kind="incompatible",
        )
    if isinstance(status, int) and status >= 400 and _NO_TOOLS.search(text):
        return no_tools(text, where, status)
    if isinstance(status, int) and status >= 400 and _NOT_LOADED.search(text):
        return ProviderError(
            f"{where}: the server has no model loaded (HTTP {status}: {text}). Load "
            f"'{model}' in the server (LM Studio: its Developer page, or `lms load`), "
            "then retry.",
            kind="not_found",
        )
    if isinstance(status, int):
        if status in (401, 403):
            return ProviderError(
                f"{where} refused the API key (HTTP {status}: {text}). Store the right key "
                f"with `portico secret set NAME` and reference it as api_key in "
                f"models.providers.{provider}.",
                kind="auth",
            )
        if status == 404:
            listed = ", ".join(models[:20]) if models else ""
            more = f" It lists: {listed}." if listed else ""
            pull = f" Pull it (`ollama pull {model}`) or pick" if "try pulling" in text else " Pick"
            return ProviderError(
                f"{where}: the server does not know the model '{model}' (HTTP 404: {text}).{more}"
                f"{pull} one with /model or set default_model in models.providers.{provider}.",
                kind="not_found",
            )
        if status == 429:
            after = _retry_after(exc)
            wait = f" Try again in {after:g} s." if after is not None else " Try again later."
            return ProviderError(
                f"{where} is rate limited (HTTP 429: {text}).{wait}",
                kind="rate_limit",
                retryable=True,
                retry_after=after,
            )
        if status in (400, 413, 422) and (
            _CONTEXT.search(text) or _CONTEXT.search(str(_body_fields(exc).get("type", "")))
        ):
            return context_error(text, where, _body_fields(exc))
        if status >= 500 and _CONTEXT.search(text):  # Ollama's own API answers 500
            return context_error(text, where, _body_fields(exc))
        if status >= 500:
            return ProviderError(
                f"{where} had a server error (HTTP {status}: {text}). Retry in a moment.",
                kind="server",
                retryable=True,
            )
        return ProviderError(
            f"{where} rejected the request (HTTP {status}: {text}).", kind="server"
        )
    if _CONTEXT.search(text):
        return context_error(text, where, _body_fields(exc))
    return ProviderError(f"{where} failed: {name}: {text}", kind="server", retryable=True)


def _api_name(kind: str) -> str:
    return "Anthropic Messages" if kind == "anthropic" else "OpenAI-compatible"
