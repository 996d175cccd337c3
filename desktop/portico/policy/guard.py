"""ToolGuard: every model tool call passes validation, approvals and spend here.

Order of a call:

1. resolve the tool and validate the arguments against its input schema: invalid
   arguments go back to the model as an error, nobody is asked;
2. a costed call that would take the chat past ``spend_limit`` (or any costed call after
   the chat reached it) asks Allow Once / Deny, even on ``trust: full``, YOLO or
   ``approvals.mode: off``; where nobody can answer it is refused and the model is told
   not to retry;
3. otherwise the trust-based approval (skipped by ``trust: full``, YOLO and
   ``approvals.mode: off``), satisfied by a remembered Session / Always approval;
4. the declared cost is added to the chat's totals, then the registry runs the call.

A call's :class:`~portico.runtime.call_context.CallContext` names the call in every
question (``call_id``, ``caller``) and hears each question asked and ended
(``on_question``); a call the guard does not let through ends as a :class:`Refusal`.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol, TypeVar

from portico.config.model import ServerSpec, ToolCost
from portico.policy.approval_store import ApprovalStore
from portico.policy.approvals import (
    ApprovalKey,
    approval_reason,
    arguments_digest,
    pretty_json,
    server_authority,
)
from portico.policy.ask import Outcome, ask_outcome
from portico.policy.spend import SpendLedger, cost_line, cost_of
from portico.policy.validation import validation_errors
from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    Caller,
    Prompter,
    SpendApprovalRequest,
    ToolApprovalRequest,
)
from portico.runtime.call_context import CallContext, QuestionAsked, QuestionEnded
from portico.runtime.registry import RegisteredTool
from portico.runtime.results import TextPart, ToolResult
from portico.runtime.toolsearch import TOOL_SEARCH, ActiveSet

_chat_ids = itertools.count(1)
T = TypeVar("T")


@dataclass
class ChatContext:
    """One conversation as the guard sees it.

    A branch or continuation shares ``spend`` (use :meth:`branch`); a new chat gets a new
    context (and new totals).
    """

    chat_id: str = field(default_factory=lambda: f"chat-{next(_chat_ids)}")
    spend: SpendLedger = field(default_factory=SpendLedger)
    yolo: bool = False

    @cached_property
    def caller(self) -> Caller:
        """The chat as the caller of its tool calls."""
        return Caller("chat", self.chat_id)

    def branch(self, chat_id: str | None = None) -> ChatContext:
        return ChatContext(
            chat_id=chat_id or f"chat-{next(_chat_ids)}", spend=self.spend, yolo=self.yolo
        )


class GuardedRegistry(Protocol):
    """What the guard needs of the registry (``runtime.registry.Registry``)."""

    def resolve(self, qualified: str) -> RegisteredTool: ...

    def spec(self, server: str) -> ServerSpec | None: ...

    def generation(self, server: str) -> int | None: ...

    async def call(
        self,
        qualified: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        context: CallContext | None = None,
        active: ActiveSet | None = None,
    ) -> ToolResult: ...


RefusalReason = Literal["unknown", "invalid", "denied", "refused", "unanswered"]


@dataclass(frozen=True)
class Refusal(ToolResult):
    """A call the guard did not let through to the server; the text tells the model why.
    ``reason``: no such tool or server, invalid arguments, the person denied it, nobody
    could answer its question (refused), or the question ended without an answer."""

    reason: RefusalReason = "refused"


def audience_refusal(tool: RegisteredTool, caller: Caller) -> str | None:
    """Why ``caller`` may not call ``tool`` (MCP Apps visibility), or None.

    A chat (its model, and ``/call`` in it) and another client of the local endpoint
    call only tools offered to models; a view calls only its own server's tools offered
    to views; the person (Try it, the CLI) calls any tool."""
    if caller.kind in ("chat", "client") and not tool.for_model:
        who = "a chat" if caller.kind == "chat" else "another client"
        return (
            f"There is no tool named '{tool.qualified}' for {who}: its server offers it to "
            "the server's views only."
        )
    if caller.kind == "view":
        if tool.server != caller.server or tool.utility:
            return (
                f"A view of server '{caller.server}' may call only that server's own tools, "
                f"not '{tool.qualified}'."
            )
        if not tool.for_views:
            return f"The tool '{tool.qualified}' is offered to models only, not to views."
    return None


def error_result(text: str, reason: RefusalReason) -> Refusal:
    return Refusal(parts=(TextPart(text),), is_error=True, reason=reason)


class ToolGuard:
    """Wraps ``registry.call`` with validation, approvals and spend."""

    def __init__(
        self,
        registry: GuardedRegistry,
        prompter: Prompter,
        *,
        spec_for: Callable[[str], ServerSpec | None] | None = None,
        approvals: ApprovalStore | None = None,
        approvals_off: bool | Callable[[], bool] = False,
        yolo: bool = False,
        question_timeout: float | None = None,
    ) -> None:
        self.registry = registry
        self.prompter = prompter
        self.spec_for = spec_for or registry.spec
        self.approvals = approvals or ApprovalStore()
        # approvals.mode: off (the profile's setting); a callable is read on every call,
        # e.g. ``lambda: hub.settings.approvals_mode == "off"`` to follow config reloads
        self.approvals_off = approvals_off
        self.yolo = yolo  # --yolo: this process
        self.question_timeout = question_timeout

    async def call(
        self,
        chat: ChatContext,
        qualified: str,
        arguments: Mapping[str, Any] | None,
        *,
        context: CallContext | None = None,
        active: ActiveSet | None = None,
    ) -> ToolResult:
        """Run one model tool call; every refusal comes back as a :class:`Refusal`."""
        if qualified == TOOL_SEARCH:  # searching the tool list reads nothing from servers
            return await self.registry.call(qualified, arguments, active=active)
        try:
            tool = self.registry.resolve(qualified)
        except (KeyError, LookupError) as exc:
            return error_result(f"There is no tool named '{qualified}' ({exc}).", "unknown")
        caller = context.caller if context is not None else chat.caller
        closed = audience_refusal(tool, caller)
        if closed is not None:
            return error_result(closed, "unknown")
        spec = self.spec_for(tool.server)
        if spec is None:
            return error_result(f"Server '{tool.server}' is not configured any more.", "unknown")
        args = dict(arguments or {}) if isinstance(arguments, Mapping) else arguments
        problems = validation_errors(args, tool.input_schema, schema_key=tool.digest)
        if problems:
            listed = "; ".join(problems)
            return error_result(
                f"Invalid arguments for '{tool.qualified}': {listed}. Nothing was run; fix "
                f"the arguments to match the tool's input schema and call it again.",
                "invalid",
            )
        assert isinstance(args, dict)
        cost = cost_of(spec, tool.tool)
        if cost is None:
            refusal = await self._decide(chat, spec, tool, args, cost, context)
            if refusal is not None:
                return refusal
        else:
            async with chat.spend.lock:
                refusal = await self._decide(chat, spec, tool, args, cost, context)
                if refusal is not None:
                    return refusal
                # Counted when approved and started, even if the server dies during the call.
                chat.spend.add(spec.name, cost.high)
        if context is None:  # the call still names its caller (the server's Activity)
            context = CallContext(caller)
        return await self.registry.call(tool.qualified, args, context=context)

    # --- decisions -------------------------------------------------------------------
    async def _decide(
        self,
        chat: ChatContext,
        spec: ServerSpec,
        tool: RegisteredTool,
        args: dict[str, Any],
        cost: ToolCost | None,
        context: CallContext | None,
    ) -> Refusal | None:
        if cost is not None and chat.spend.needs_limit_prompt(spec, cost):
            return await self._ask_spend(chat, spec, tool, args, context)
        asked = self._approval_needed(chat, spec, tool, args)
        if asked is None:
            return None
        reason, key, generation = asked
        annotations = tool.annotations or {}
        call_id, caller = _named(context)
        request = ToolApprovalRequest(
            server=spec.name,
            tool=tool.tool,
            qualified_name=tool.qualified,
            description=tool.description,
            arguments=args,
            arguments_json=pretty_json(args),
            annotations=annotations,
            cost_line=cost_line(cost, spec.cost_unit) if cost else None,
            spend_line=chat.spend.spend_line(spec) if cost else None,
            reason=reason,
            call_id=call_id,
            caller=caller,
        )
        outcome = await self._ask(request, self.prompter.approve_tool, context, _choice)
        if not outcome.answered or outcome.answer is None:
            return _not_run(tool, outcome)
        answer = outcome.answer
        if answer.choice is ApprovalChoice.DENY:
            return error_result(
                f"The person denied the call to '{tool.qualified}'. It was not run; do not "
                f"retry it unless they ask.",
                "denied",
            )
        remembered = key.widened() if answer.any_arguments else key
        if answer.choice is ApprovalChoice.SESSION:
            self.approvals.allow_session(remembered, generation)
        elif answer.choice is ApprovalChoice.ALWAYS:
            self.approvals.allow_always(remembered)
        return None

    def _approval_needed(
        self, chat: ChatContext, spec: ServerSpec, tool: RegisteredTool, args: dict[str, Any]
    ) -> tuple[str, ApprovalKey, int | None] | None:
        """Why this call asks the person (with its approval key and the session's
        generation), or None when a rule or an earlier answer lets it through."""
        off = self.approvals_off() if callable(self.approvals_off) else self.approvals_off
        skip = chat.yolo or self.yolo or off
        reason = approval_reason(spec, tool.annotations or {}, skip_trust_prompts=skip)
        if reason is None:
            return None
        key = ApprovalKey(
            server=spec.name,
            tool=tool.tool,
            authority=server_authority(spec),
            contract=tool.digest,
            arguments=arguments_digest(args),
        )
        generation = self.registry.generation(spec.name)
        if self.approvals.allows(key, generation):
            return None
        return reason, key, generation

    def would_ask(
        self, chat: ChatContext, qualified: str, arguments: Mapping[str, Any] | None
    ) -> bool:
        """True when calling ``qualified`` with ``arguments`` now would ask the person
        (an approval or the spend limit): what Try it says before a call, after an
        Allow for Session too."""
        try:
            tool = self.registry.resolve(qualified)
        except (KeyError, LookupError):
            return False
        spec = self.spec_for(tool.server)
        if spec is None or not isinstance(arguments, Mapping):
            return False
        cost = cost_of(spec, tool.tool)
        if cost is not None and chat.spend.needs_limit_prompt(spec, cost):
            return True
        return self._approval_needed(chat, spec, tool, dict(arguments)) is not None

    async def _ask_spend(
        self,
        chat: ChatContext,
        spec: ServerSpec,
        tool: RegisteredTool,
        args: dict[str, Any],
        context: CallContext | None,
    ) -> Refusal | None:
        cost = cost_of(spec, tool.tool)
        assert cost is not None
        call_id, caller = _named(context)
        request = SpendApprovalRequest(
            server=spec.name,
            tool=tool.tool,
            qualified_name=tool.qualified,
            arguments_json=pretty_json(args),
            cost_line=cost_line(cost, spec.cost_unit),
            spend_line=chat.spend.spend_line(spec)
            or f"This chat has not spent anything on '{spec.name}' yet.",
            limit_line=chat.spend.limit_line(spec, cost),
            call_id=call_id,
            caller=caller,
        )
        outcome = await self._ask(request, self.prompter.approve_spend, context, _same)
        if outcome.answered and outcome.answer is ApprovalChoice.ONCE:
            chat.spend.past_limit.add(spec.name)
            return None
        if outcome.ended_by == "refused":
            return error_result(
                f"Refused without running: {request.limit_line} Nobody can approve that "
                f"here. Do not retry this call. ({outcome.message})",
                "refused",
            )
        if outcome.answered:
            return error_result(
                f"The person denied the call to '{tool.qualified}' ({request.limit_line}) "
                f"It was not run; do not retry it unless they ask.",
                "denied",
            )
        return _not_run(tool, outcome)

    async def _ask(
        self,
        request: Any,
        method: Callable[[Any], Awaitable[T]],
        context: CallContext | None,
        choice_of: Callable[[T], ApprovalChoice],
    ) -> Outcome[T]:
        """Ask through the Prompter, telling the call's context the question and its end
        (an aborted one too, when the call itself is cancelled meanwhile)."""
        tell = context.on_question if context is not None else None
        if tell is None:
            return await ask_outcome(method(request), self.question_timeout)
        tell(QuestionAsked(request))
        try:
            outcome: Outcome[T] = await ask_outcome(method(request), self.question_timeout)
        except BaseException:
            tell(QuestionEnded(None, "aborted", "the call was stopped"))
            raise
        answer = outcome.answer
        choice = choice_of(answer) if outcome.answered and answer is not None else None
        tell(QuestionEnded(choice, outcome.ended_by, outcome.message))
        return outcome


def _named(context: CallContext | None) -> tuple[str, Caller | None]:
    return ("", None) if context is None else (context.call_id, context.caller)


def _choice(answer: ApprovalAnswer) -> ApprovalChoice:
    return answer.choice


def _same(choice: ApprovalChoice) -> ApprovalChoice:
    return choice


def _not_run(tool: RegisteredTool, outcome: Outcome[Any]) -> Refusal:
    if outcome.ended_by == "refused":
        return error_result(
            f"The call to '{tool.qualified}' needs approval and nobody can give it here, "
            f"so it was not run. Do not retry it. ({outcome.message})",
            "refused",
        )
    return error_result(
        f"The call to '{tool.qualified}' was not approved ({outcome.message}), so it was not run.",
        "unanswered",
    )
