"""One object that wires every policy piece into the runtime's hooks.

policy = Policy(prompter, provider=None)
hub = Hub(bus, hooks=policy.hooks())
guard = policy.guard(hub.registry, approvals_off=settings.approvals_mode == "off")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from portico.model_port import ModelProvider
from portico.policy.approval_store import ApprovalStore
from portico.policy.elicitation import ElicitationPolicy
from portico.policy.guard import GuardedRegistry, ToolGuard
from portico.policy.netcheck import Resolver
from portico.policy.sampling import SamplingPolicy
from portico.policy.trust import TrustGate
from portico.policy.trust_store import TrustStore
from portico.policy.unsandboxed import UnsandboxedConsent
from portico.prompts import Prompter
from portico.runtime.hooks import ConnectionHooks


class Policy:
    def __init__(
        self,
        prompter: Prompter,
        *,
        provider: ModelProvider | None = None,
        resolver: Resolver | None = None,
        trust_store: TrustStore | None = None,
        approvals: ApprovalStore | None = None,
        ask_trust: bool = True,
        default_model: str | None = None,
    ) -> None:
        self.prompter = prompter
        self.trust = TrustGate(prompter, store=trust_store, resolver=resolver, ask=ask_trust)
        self.sampling = SamplingPolicy(prompter, provider, default_model=default_model)
        self.elicitation = ElicitationPolicy(prompter)
        self.approvals = approvals or ApprovalStore()
        self.unsandboxed = UnsandboxedConsent(prompter)

    def hooks(self, base: ConnectionHooks | None = None) -> ConnectionHooks:
        """``base`` (or empty hooks) with the trust gate, pins, sampling and elicitation."""
        hooks = replace(base) if base is not None else ConnectionHooks()
        hooks.trust_gate = self.trust
        hooks.pinned_addresses = self.trust.pinned_addresses
        hooks.sampling_callback = self.sampling.callback
        hooks.elicitation_callback = self.elicitation.callback
        hooks.unsandboxed_ok = self.unsandboxed
        return hooks

    def guard(
        self,
        registry: GuardedRegistry,
        *,
        approvals_off: bool | Callable[[], bool] = False,
        yolo: bool = False,
        question_timeout: float | None = None,
    ) -> ToolGuard:
        return ToolGuard(
            registry,
            self.prompter,
            approvals=self.approvals,
            approvals_off=approvals_off,
            yolo=yolo,
            question_timeout=question_timeout,
        )
