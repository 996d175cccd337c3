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
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from portico.config.model import ServerSpec, ToolCost
from portico.policy.approval_store import ApprovalStore
from portico.policy.approvals import (
    ApprovalKey,
    approval_reason,
    arguments_digest,
    contract_digest,
    pretty_json,
    server_authority,
)
from portico.policy.ask import Outcome, ask_outcome
from portico.policy.spend import SpendLedger, cost_line, cost_of
from portico.policy.validation import validation_errors
from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    Prompter,
    SpendApprovalRequest,
    ToolApprovalRequest,
)
from portico.runtime.results import TextPart, ToolResult
from portico.runtime.toolsearch import TOOL_SEARCH

_chat_ids = itertools.count(1)
_VIEWS_MAX = 4096  # tool views kept per guard


@dataclass
class ChatContext:
    """One conversation as the guard sees it.

    A branch or continuation shares ``spend`` (use :meth:`branch`); a new chat gets a new
    context (and new totals).
    """

    chat_id: str = field(default_factory=lambda: f"chat-{next(_chat_ids)}")
    spend: SpendLedger = field(default_factory=SpendLedger)
    yolo: bool = False

    def branch(self, chat_id: str | None = None) -> ChatContext:
        return ChatContext(
            chat_id=chat_id or f"chat-{next(_chat_ids)}", spend=self.spend, yolo=self.yolo
        )


class CallableRegistry(Protocol):
    def resolve(self, qualified: str) -> Any: ...

    def spec(self, server: str) -> ServerSpec | None: ...

    def generation(self, server: str) -> int | None: ...

    async def call(
        self,
        qualified: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: Any = None,
        active: Any = None,
    ) -> ToolResult: ...


@dataclass(frozen=True)
class ToolView:
    """What the guard needs of a registered tool, whatever the registry calls it."""

    qualified: str
    server: str
    tool: str
    description: str
    schema: Mapping[str, Any]
    annotations: Mapping[str, Any]
    contract: str


def _first(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


def _as_mapping(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return {k: v for k, v in dump(by_alias=True, exclude_none=True).items()}
    return dict(vars(value))


def tool_view(registered: Any, qualified: str) -> ToolView:
    tool = _first(registered, "tool")
    tool_name = tool if isinstance(tool, str) else _first(tool, "name", default="")
    if not tool_name:
        tool_name = _first(registered, "tool_name", "name", default="")
    description = _first(registered, "description", default=None)
    if description is None and tool is not None and not isinstance(tool, str):
        description = _first(tool, "description", default="")
    schema = _first(registered, "schema", "input_schema", default=None)
    if schema is None and tool is not None and not isinstance(tool, str):
        schema = _first(tool, "input_schema", "inputSchema", default={})
    annotations = _first(registered, "annotations", default=None)
    if annotations is None and tool is not None and not isinstance(tool, str):
        annotations = _first(tool, "annotations", default=None)
    annotations_map = _as_mapping(annotations)
    schema_map = _as_mapping(schema)
    contract = _first(registered, "contract_digest", "contract", "digest", default=None)
    if not isinstance(contract, str) or not contract:
        contract = contract_digest(str(tool_name), description, schema_map, annotations_map)
    return ToolView(
        qualified=str(_first(registered, "qualified", "qualified_name", default=qualified)),
        server=str(_first(registered, "server", "server_name")),
        tool=str(tool_name),
        description=str(description or ""),
        schema=schema_map,
        annotations=annotations_map,
        contract=contract,
    )


def error_result(text: str) -> ToolResult:
    return ToolResult(parts=(TextPart(text),), is_error=True)


class ToolGuard:
    """Wraps ``registry.call`` with validation, approvals and spend."""

    def __init__(
        self,
        registry: CallableRegistry,
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
        self._views: dict[str, tuple[Any, ToolView]] = {}

    async def call(
        self,
        chat: ChatContext,
        qualified: str,
        arguments: Mapping[str, Any] | None,
        *,
        progress: Any = None,
        active: Any = None,
    ) -> ToolResult:
        """Run one model tool call; every refusal comes back as an error result."""
        if qualified == TOOL_SEARCH:  # searching the tool list reads nothing from servers
            return await self.registry.call(qualified, arguments, active=active)
        try:
            registered = self.registry.resolve(qualified)
        except (KeyError, LookupError) as exc:
            return error_result(f"There is no tool named '{qualified}' ({exc}).")
        view = self._view(registered, qualified)
        spec = self.spec_for(view.server)
        if spec is None:
            return error_result(f"Server '{view.server}' is not configured any more.")
        args = dict(arguments or {}) if isinstance(arguments, Mapping) else arguments
        problems = validation_errors(args, view.schema, schema_key=view.contract)
        if problems:
            listed = "; ".join(problems)
            return error_result(
                f"Invalid arguments for '{view.qualified}': {listed}. Nothing was run; fix "
                f"the arguments to match the tool's input schema and call it again."
            )
        assert isinstance(args, dict)
        cost = cost_of(spec, view.tool)
        if cost is None:
            refusal = await self._decide(chat, spec, view, args, cost)
            if refusal is not None:
                return refusal
        else:
            async with chat.spend.lock:
                refusal = await self._decide(chat, spec, view, args, cost)
                if refusal is not None:
                    return refusal
                # Counted when approved and started, even if the server dies during the call.
                chat.spend.add(spec.name, cost.high)
        return await self.registry.call(view.qualified, args, progress=progress)

    def _view(self, registered: Any, qualified: str) -> ToolView:
        """``tool_view`` once per registered tool object (a registry makes a new one when
        the server's list changes, so a kept view always matches its tool)."""
        kept = self._views.get(qualified)
        if kept is not None and kept[0] is registered:
            return kept[1]
        view = tool_view(registered, qualified)
        if len(self._views) >= _VIEWS_MAX:
            self._views.pop(next(iter(self._views)))
        self._views[qualified] = (registered, view)
        return view

    # --- decisions -------------------------------------------------------------------
    async def _decide(
        self,
        chat: ChatContext,
        spec: ServerSpec,
        view: ToolView,
        args: dict[str, Any],
        cost: ToolCost | None,
    ) -> ToolResult | None:
        if cost is not None and chat.spend.needs_limit_prompt(spec, cost):
            return await self._ask_spend(chat, spec, view, args)
        off = self.approvals_off() if callable(self.approvals_off) else self.approvals_off
        skip = chat.yolo or self.yolo or off
        reason = approval_reason(spec, view.annotations, skip_trust_prompts=skip)
        if reason is None:
            return None
        key = ApprovalKey(
            server=spec.name,
            tool=view.tool,
            authority=server_authority(spec),
            contract=view.contract,
            arguments=arguments_digest(args),
        )
        generation = self.registry.generation(spec.name)
        if self.approvals.allows(key, generation):
            return None
        request = ToolApprovalRequest(
            server=spec.name,
            tool=view.tool,
            qualified_name=view.qualified,
            description=view.description,
            arguments=args,
            arguments_json=pretty_json(args),
            annotations=view.annotations,
            cost_line=cost_line(cost, spec.cost_unit) if cost else None,
            spend_line=chat.spend.spend_line(spec) if cost else None,
            reason=reason,
        )
        outcome: Outcome[ApprovalAnswer] = await ask_outcome(
            self.prompter.approve_tool(request), self.question_timeout
        )
        if not outcome.answered or outcome.answer is None:
            return _not_run(view, outcome)
        answer = outcome.answer
        if answer.choice is ApprovalChoice.DENY:
            return error_result(
                f"The person denied the call to '{view.qualified}'. It was not run; do not "
                f"retry it unless they ask."
            )
        remembered = key.widened() if answer.any_arguments else key
        if answer.choice is ApprovalChoice.SESSION:
            self.approvals.allow_session(remembered, generation)
        elif answer.choice is ApprovalChoice.ALWAYS:
            self.approvals.allow_always(remembered)
        return None

    async def _ask_spend(
        self, chat: ChatContext, spec: ServerSpec, view: ToolView, args: dict[str, Any]
    ) -> ToolResult | None:
        cost = cost_of(spec, view.tool)
        assert cost is not None
        request = SpendApprovalRequest(
            server=spec.name,
            tool=view.tool,
            qualified_name=view.qualified,
            arguments_json=pretty_json(args),
            cost_line=cost_line(cost, spec.cost_unit),
            spend_line=chat.spend.spend_line(spec)
            or f"This chat has not spent anything on '{spec.name}' yet.",
            limit_line=chat.spend.limit_line(spec, cost),
        )
        outcome: Outcome[ApprovalChoice] = await ask_outcome(
            self.prompter.approve_spend(request), self.question_timeout
        )
        if outcome.answered and outcome.answer is ApprovalChoice.ONCE:
            chat.spend.past_limit.add(spec.name)
            return None
        if outcome.ended_by == "refused":
            return error_result(
                f"Refused without running: {request.limit_line} Nobody can approve that "
                f"here. Do not retry this call. ({outcome.message})"
            )
        if outcome.answered:
            return error_result(
                f"The person denied the call to '{view.qualified}' ({request.limit_line}) "
                f"It was not run; do not retry it unless they ask."
            )
        return _not_run(view, outcome)


def _not_run(view: ToolView, outcome: Outcome[Any]) -> ToolResult:
    if outcome.ended_by == "refused":
        return error_result(
            f"The call to '{view.qualified}' needs approval and nobody can give it here, "
            f"so it was not run. Do not retry it. ({outcome.message})"
        )
    return error_result(
        f"The call to '{view.qualified}' was not approved ({outcome.message}), so it was not run."
    )
