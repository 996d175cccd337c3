"""Spend: what a costed tool call costs, the running totals of a chat, and the limit rule.

Totals live in memory only. A :class:`SpendLedger` belongs to one chat; a branch or a
continuation of that chat shares the same ledger object, a new chat gets a new one.
A call adds the top of its declared range when it is approved and started; declined or
blocked calls add nothing.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field

from portico.config.model import ServerSpec, ToolCost


def number(value: float) -> str:
    """20.0 -> '20', 2.5 -> '2.5'."""
    return f"{value:g}" if value != int(value) else str(int(value))


def cost_of(spec: ServerSpec, tool: str) -> ToolCost | None:
    """The declared cost of ``tool`` on ``spec``; None when free or not declared."""
    for name, cost in spec.tool_costs:  # a few entries at most; no dict per call
        if name == tool:
            return cost if cost.high > 0 else None
    return None


def cost_line(cost: ToolCost, unit: str) -> str:
    note = f" ({cost.note})" if cost.note else ""
    if cost.is_range:
        return f"Costs {number(cost.low)}-{number(cost.high)} {unit}{note}."
    return f"Costs about {number(cost.high)} {unit}{note}."


def has_limit(spec: ServerSpec) -> bool:
    return spec.spend_limit is not None and spec.spend_limit > 0


@dataclass
class SpendLedger:
    """Totals of one chat (shared by its branches), per server."""

    totals: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    # Servers whose limit this chat reached: every further costed call asks again.
    past_limit: set[str] = field(default_factory=set)
    # Held from the limit check until the cost is added, so two parallel costed calls
    # cannot both slip under the limit.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)
    # What the chat's model requests cost, per provider (in its currency, from its
    # price table); providers without a price for the model add nothing.
    models: dict[str, float] = field(default_factory=dict)

    def model_total(self, provider: str) -> float:
        return self.models.get(provider, 0.0)

    def add_model(self, provider: str, amount: float) -> None:
        self.models[provider] = self.models.get(provider, 0.0) + amount

    def total(self, server: str) -> float:
        return self.totals.get(server, 0.0)

    @property
    def chat_total(self) -> float:
        return sum(self.totals.values())

    def add(self, server: str, amount: float) -> None:
        self.totals[server] = self.totals.get(server, 0.0) + amount

    def would_pass_limit(self, spec: ServerSpec, cost: ToolCost) -> bool:
        if not has_limit(spec):
            return False
        assert spec.spend_limit is not None
        return self.total(spec.name) + cost.high > spec.spend_limit

    def needs_limit_prompt(self, spec: ServerSpec, cost: ToolCost) -> bool:
        """True when this costed call must go through the Allow Once / Deny prompt."""
        if not has_limit(spec):
            return False
        if spec.name in self.past_limit:
            return True
        return self.would_pass_limit(spec, cost)

    def spend_line(self, spec: ServerSpec) -> str | None:
        used = self.total(spec.name)
        if used <= 0:
            return None
        limit = f" (limit {number(spec.spend_limit)})" if has_limit(spec) else ""  # type: ignore[arg-type]
        return f"This chat has used about {number(used)} {spec.cost_unit} on '{spec.name}'{limit}."

    def limit_line(self, spec: ServerSpec, cost: ToolCost) -> str:
        limit = number(spec.spend_limit or 0)
        reached = spec.name in self.past_limit or self.total(spec.name) >= (spec.spend_limit or 0)
        if not reached and self.would_pass_limit(spec, cost):
            return (
                f"This call would take the chat past the limit of {limit} {spec.cost_unit} "
                f"on '{spec.name}'."
            )
        return (
            f"This chat already reached the limit of {limit} {spec.cost_unit} on "
            f"'{spec.name}': every further costed call asks first."
        )
