"""Elicitation: a server asks the person for input in the middle of a call.

Form mode goes through the Prompter: accept (with data), decline, cancel. Defaults from
the requested schema are pre-filled, and an accepted answer is validated against the
schema; an invalid one is asked again with the error shown. Nothing answers on the
person's behalf (YOLO and ``approvals.mode: off`` do not apply). The per-server timeout
(``elicitation.timeout``, 300 s by default) covers the whole exchange. URL mode is
declined as unsupported unless ``elicitation.allow_url``; then the whole URL is shown with
its host set apart and warnings for look-alike hosts (``policy.url_review``), and only on
the person's consent it opens in their external browser (never fetched, never in-app).

A request made during a call from a local-endpoint client goes to that client instead
(``route``, set by the gateway): only when the server's own rules let it ask at all
(elicitation enabled; URL mode with ``allow_url`` and a URL that passes the review), and
the client's answer must still meet the requested schema.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from portico.config.model import ServerSpec
from portico.policy.ask import ask_outcome
from portico.policy.url_review import review_url
from portico.policy.validation import validation_errors
from portico.prompts import ElicitationAnswer, ElicitationRequest, Notice, Prompter

if TYPE_CHECKING:
    from mcp import types

log = logging.getLogger(__name__)

# (server) -> an async sender of the request to another client, or None
Route = Callable[[str], Callable[[Any], Awaitable[Any]] | None]


async def open_in_browser(url: str) -> None:
    """The person's own browser, off the loop (webbrowser may spawn xdg-settings)."""
    import webbrowser

    try:
        await asyncio.to_thread(webbrowser.open, url, 2)
    except Exception as exc:  # no browser: the person still has the URL on screen
        log.info("could not open %s in a browser: %s", url, exc)


@dataclass
class ElicitationMetrics:
    requests: int = 0
    accepted: int = 0
    declined: int = 0
    cancelled: int = 0
    errors: int = 0


def schema_defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {
        name: prop["default"]
        for name, prop in properties.items()
        if isinstance(prop, Mapping) and "default" in prop
    }


class ElicitationPolicy:
    def __init__(
        self,
        prompter: Prompter,
        opener: Callable[[str], Awaitable[None]] = open_in_browser,
    ) -> None:
        self.prompter = prompter
        self.opener = opener  # opens a consented URL-mode address outside the app
        self.metrics: dict[str, ElicitationMetrics] = {}
        # Who else may answer: the local endpoint's client whose call made the server ask
        # (gateway/forwarding.py). Returns a sender, or None to ask the person.
        self.route: Route | None = None

    def metrics_for(self, server: str) -> ElicitationMetrics:
        return self.metrics.setdefault(server, ElicitationMetrics())

    def callback(self, spec: ServerSpec) -> Any:
        """The SDK ``elicitation_callback`` for ``spec``; None when elicitation is off."""
        if not spec.elicitation.enabled:
            return None

        async def elicitation_callback(context: Any, params: Any) -> Any:
            return await self.handle(spec, params)

        return elicitation_callback

    async def handle(self, spec: ServerSpec, params: Any) -> types.ElicitResult:
        from mcp import types

        metrics = self.metrics_for(spec.name)
        metrics.requests += 1
        send = self.route(spec.name) if self.route is not None else None
        if getattr(params, "mode", "form") == "url":
            result = await self._url(spec, params, send)
        elif send is not None:
            result = await self._forwarded(spec, params, send)
        else:
            result = await self._form(spec, params)
        if result.action == "accept":
            metrics.accepted += 1
        elif result.action == "decline":
            metrics.declined += 1
        else:
            metrics.cancelled += 1
        content = dict(result.content) if result.content is not None else None
        return types.ElicitResult(action=result.action, content=content)

    async def _forwarded(
        self, spec: ServerSpec, params: Any, send: Callable[[Any], Awaitable[Any]]
    ) -> ElicitationAnswer:
        """The calling client's person answers; the reply still meets the schema."""
        try:
            reply = await asyncio.wait_for(send(params), spec.elicitation.timeout)
        except Exception as exc:
            log.info("elicitation of %s not answered by the client: %s", spec.name, exc)
            return ElicitationAnswer("cancel")
        action = getattr(reply, "action", "cancel")
        if action != "accept":
            return ElicitationAnswer("decline" if action == "decline" else "cancel")
        content = dict(getattr(reply, "content", None) or {})
        schema: dict[str, Any] = dict(params.requested_schema or {})
        problems = validation_errors(content, schema, check_formats=True)
        if problems:
            self.metrics_for(spec.name).errors += 1
            log.info("elicitation answer for %s refused: %s", spec.name, "; ".join(problems))
            return ElicitationAnswer("cancel")
        return ElicitationAnswer("accept", content)

    async def _url(
        self,
        spec: ServerSpec,
        params: Any,
        send: Callable[[Any], Awaitable[Any]] | None = None,
    ) -> ElicitationAnswer:
        if not spec.elicitation.allow_url:
            await self._notice(
                spec,
                f"'{spec.name}' asked you to open {params.url}; URL requests are declined "
                f"unless elicitation.allow_url is set for the server",
            )
            return ElicitationAnswer("decline")
        review = review_url(str(params.url))
        if send is not None and review.openable:
            # the client's own host shows the URL to its person and opens it there
            try:
                reply = await asyncio.wait_for(send(params), spec.elicitation.timeout)
            except Exception as exc:
                log.info("URL elicitation of %s not answered by the client: %s", spec.name, exc)
                return ElicitationAnswer("cancel")
            action = getattr(reply, "action", "cancel")
            if action == "accept":
                return ElicitationAnswer("accept")
            return ElicitationAnswer("decline" if action == "decline" else "cancel")
        request = ElicitationRequest(
            server=spec.name,
            message=params.message,
            mode="url",
            url=review.url,
        )
        outcome = await ask_outcome(self.prompter.elicit(request), spec.elicitation.timeout)
        if not outcome.answered or outcome.answer is None:
            return self._unanswered(spec, outcome.ended_by, outcome.message)
        if outcome.answer.action == "accept":
            if not review.openable:
                return ElicitationAnswer("decline")
            # Consent given: the person's own browser opens it (never a view in the app,
            # never fetched by Portico).
            await self.opener(review.url)
        return ElicitationAnswer(outcome.answer.action)

    async def _form(self, spec: ServerSpec, params: Any) -> ElicitationAnswer:
        schema: dict[str, Any] = dict(params.requested_schema or {})
        defaults = schema_defaults(schema)
        deadline = time.monotonic() + spec.elicitation.timeout
        error: str | None = None
        while True:
            request = ElicitationRequest(
                server=spec.name,
                message=params.message,
                mode="form",
                schema=schema,
                defaults=defaults,
                error=error,
            )
            left = deadline - time.monotonic()
            if left <= 0:
                return self._unanswered(spec, "timeout", "no answer in time")
            outcome = await ask_outcome(self.prompter.elicit(request), left)
            if not outcome.answered or outcome.answer is None:
                return self._unanswered(spec, outcome.ended_by, outcome.message)
            answer = outcome.answer
            if answer.action != "accept":
                return ElicitationAnswer(answer.action)
            content = dict(answer.content or {})
            problems = validation_errors(content, schema, check_formats=True)
            if not problems:
                return ElicitationAnswer("accept", content)
            self.metrics_for(spec.name).errors += 1
            error = "; ".join(problems)
            defaults = {**defaults, **content}

    def _unanswered(self, spec: ServerSpec, ended_by: str, message: str) -> ElicitationAnswer:
        # Nobody could answer: decline (an answer of "no"); timed out or closed: cancel.
        log.info("elicitation of %s not answered (%s): %s", spec.name, ended_by, message)
        return ElicitationAnswer("decline" if ended_by == "refused" else "cancel")

    async def _notice(self, spec: ServerSpec, text: str) -> None:
        try:
            await self.prompter.notify(Notice("warning", text, spec.name))
        except Exception:
            log.warning("%s", text)
