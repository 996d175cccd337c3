"""Sampling: a server asks the host's model for a completion.

Per server (``sampling`` in the config): enabled, a model override, ``max_tokens_cap``,
a per-request ``timeout``, ``max_rpm`` over a sliding one-minute window,
``max_tool_rounds`` and ``allowed_models``. Every request is shown to the person
(approve / edit / deny) unless the server is ``trust: full``. Limits refuse with an error
the server receives. Metrics per server: requests, errors, tokens.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from portico.config.model import ServerSpec, TrustLevel
from portico.model_port import ModelProvider
from portico.policy.ask import ask_outcome
from portico.prompts import Prompter, SamplingAnswer, SamplingMessage, SamplingRequest

if TYPE_CHECKING:
    from mcp import types

log = logging.getLogger(__name__)

WINDOW = 60.0
REVIEW_TIMEOUT = 300.0  # how long the person has to review a request
USER_REJECTED = -1  # the code MCP examples use for "the user rejected the request"
NO_MODEL = "no model is configured"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


@dataclass
class SamplingMetrics:
    requests: int = 0
    errors: int = 0
    denied: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class _Window:
    times: deque[float] = field(default_factory=deque)


def _text_of(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "tool_result":
            parts.append(f"[tool result: {_text_of(getattr(block, 'content', []))}]")
        elif kind == "tool_use":
            parts.append(f"[tool call: {getattr(block, 'name', '?')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    return "\n".join(parts)


def _tool_rounds(params: types.CreateMessageRequestParams) -> int:
    """How many tool-use rounds the conversation already went through."""
    rounds = 0
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        if message.role == "assistant" and any(
            getattr(b, "type", "") == "tool_use" for b in blocks
        ):
            rounds += 1
    return rounds


def _requested_model(params: types.CreateMessageRequestParams) -> str | None:
    prefs = params.model_preferences
    if prefs and prefs.hints:
        for hint in prefs.hints:
            if hint.name:
                return hint.name
    return None


class SamplingPolicy:
    def __init__(
        self,
        prompter: Prompter,
        provider: ModelProvider | None = None,
        *,
        default_model: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        review_timeout: float = REVIEW_TIMEOUT,
        rate_window: float = WINDOW,
    ) -> None:
        """``rate_window``: the sliding window ``max_rpm`` counts over (seconds; one
        minute in the product, shorter in tests)."""
        self.prompter = prompter
        self.provider = provider
        self.default_model = default_model
        self.clock = clock
        self.review_timeout = review_timeout
        self.rate_window = rate_window
        self.metrics: dict[str, SamplingMetrics] = {}
        self._windows: dict[str, _Window] = {}
        # A local-endpoint client whose call made the server ask (gateway/forwarding.py):
        # its model answers instead of Portico's, after the same limits and review.
        self.route: Callable[[str], Callable[[Any], Awaitable[Any]] | None] | None = None

    def metrics_for(self, server: str) -> SamplingMetrics:
        return self.metrics.setdefault(server, SamplingMetrics())

    def callback(self, spec: ServerSpec) -> Any:
        """The SDK ``sampling_callback`` for ``spec``; None when sampling is disabled
        (the client then does not offer sampling to that server at all)."""
        if not spec.sampling.enabled:
            return None

        async def sampling_callback(context: Any, params: Any) -> Any:
            return await self.handle(spec, params)

        return sampling_callback

    async def handle(self, spec: ServerSpec, params: types.CreateMessageRequestParams) -> Any:
        from mcp import types

        metrics = self.metrics_for(spec.name)
        metrics.requests += 1
        level = _LEVELS.get(spec.sampling.log_level, logging.INFO)

        def fail(message: str, code: int = types.INVALID_REQUEST) -> types.ErrorData:
            metrics.errors += 1
            log.log(level, "sampling request of %s refused: %s", spec.name, message)
            return types.ErrorData(code=code, message=message)

        cfg = spec.sampling
        now = self.clock()
        window = self._windows.setdefault(spec.name, _Window()).times
        while window and now - window[0] >= self.rate_window:
            window.popleft()
        if len(window) >= cfg.max_rpm:
            return fail(
                f"rate limit: server '{spec.name}' may make {cfg.max_rpm} sampling requests "
                f"per minute (sampling.max_rpm); try again later"
            )
        window.append(now)
        rounds = _tool_rounds(params)
        if rounds > cfg.max_tool_rounds:
            return fail(
                f"tool-round limit: this sampling conversation used {rounds} tool rounds, "
                f"more than the {cfg.max_tool_rounds} allowed for '{spec.name}' "
                f"(sampling.max_tool_rounds)"
            )
        requested = _requested_model(params)
        if requested and cfg.allowed_models and requested not in cfg.allowed_models:
            return fail(
                f"model '{requested}' is not allowed for '{spec.name}' "
                f"(sampling.allowed_models: {', '.join(cfg.allowed_models)})"
            )
        send = self.route(spec.name) if self.route is not None else None
        if send is None and (
            self.provider is None or not getattr(self.provider, "configured", True)
        ):
            return fail(f"{NO_MODEL}: Portico has no model to answer sampling requests with")
        # allowed_models without a hint: the first allowed one, never an unlisted default
        fallback = cfg.allowed_models[0] if cfg.allowed_models else self.default_model
        model = cfg.model or requested or fallback
        messages = tuple(
            SamplingMessage(role=m.role, text=_text_of(m.content)) for m in params.messages
        )
        system = params.system_prompt
        max_tokens = min(params.max_tokens, cfg.max_tokens_cap)
        if spec.trust is not TrustLevel.FULL:
            request = SamplingRequest(
                server=spec.name,
                messages=messages,
                system_prompt=system,
                requested_model=requested,
                model=model or "(default model)",
                max_tokens=max_tokens,
            )
            outcome = await ask_outcome(self.prompter.review_sampling(request), self.review_timeout)
            answer: SamplingAnswer | None = outcome.answer
            if not outcome.answered or answer is None or answer.action != "approve":
                metrics.denied += 1
                why = outcome.message if not outcome.answered else "the person denied it"
                return fail(f"sampling request declined: {why}", USER_REJECTED)
            if answer.messages is not None:
                messages = answer.messages
            if answer.system_prompt is not None:
                system = answer.system_prompt
            if answer.max_tokens is not None:
                max_tokens = min(answer.max_tokens, cfg.max_tokens_cap)
        if send is not None:
            return await self._forwarded(spec, params, messages, system, max_tokens, send, fail)
        assert self.provider is not None
        try:
            text, used_model, usage = await asyncio.wait_for(
                self.provider.complete(messages, system, model, max_tokens), cfg.timeout
            )
        except TimeoutError:
            return fail(
                f"the model did not answer within {cfg.timeout:g} s (sampling.timeout of "
                f"'{spec.name}')",
                types.INTERNAL_ERROR,
            )
        except Exception as exc:
            return fail(f"the model call failed: {exc}", types.INTERNAL_ERROR)
        metrics.input_tokens += usage.input_tokens
        metrics.output_tokens += usage.output_tokens
        log.log(
            level,
            "sampling for %s: model %s, %d tokens",
            spec.name,
            used_model,
            usage.total,
        )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text),
            model=used_model,
            stop_reason="endTurn",
        )

    async def _forwarded(
        self,
        spec: ServerSpec,
        params: types.CreateMessageRequestParams,
        messages: tuple[SamplingMessage, ...],
        system: str | None,
        max_tokens: int,
        send: Callable[[Any], Awaitable[Any]],
        fail: Callable[..., Any],
    ) -> Any:
        """The calling client answers, with what the person's review left of the request."""
        from mcp import types

        update: dict[str, Any] = {"max_tokens": max_tokens, "system_prompt": system}
        original = tuple(
            SamplingMessage(role=m.role, text=_text_of(m.content)) for m in params.messages
        )
        if messages != original:  # edited in the review: the edited text goes
            update["messages"] = [
                types.SamplingMessage(
                    role=m.role, content=types.TextContent(type="text", text=m.text)
                )
                for m in messages
            ]
        try:
            result = await asyncio.wait_for(
                send(params.model_copy(update=update)), spec.sampling.timeout
            )
        except TimeoutError:
            return fail(
                f"the client did not answer within {spec.sampling.timeout:g} s (sampling.timeout "
                f"of '{spec.name}')",
                types.INTERNAL_ERROR,
            )
        except Exception as exc:
            return fail(f"the client's sampling failed: {exc}", types.INTERNAL_ERROR)
        log.log(
            _LEVELS.get(spec.sampling.log_level, logging.INFO),
            "sampling for %s answered by a client",
            spec.name,
        )
        return result
