"""Project-server trust: the gate every connection passes before it starts.

- Global servers are trusted to start.
- Project stdio servers wait for a review (``AwaitingTrust``) unless this exact config was
  trusted before (see :mod:`portico.policy.trust_store`).
- Project HTTP servers wait when the URL is plaintext, carries credentials, does not
  resolve, or resolves to any non-public address; a public HTTPS address connects.
- Whatever the transport and address, a project server waits when it references any of
  your secrets (each listed with where it goes), replaces a global server of the same
  name with another target, or turns on ``oauth.allow_private_endpoints``.
- The review shows the trust level and costs; the stored decision binds to everything
  that decides what the server may do or receive (``trust_store.trust_digest``).
- The addresses seen at the review are pinned for the rest of the process
  (:meth:`TrustGate.pinned_addresses`, used by the HTTP client through the hooks).

Use one :class:`TrustGate` per process and plug it into ``ConnectionHooks`` with
:meth:`TrustGate.install`.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from portico.config.masking import mask_url
from portico.config.model import Scope, ServerSpec, Transport
from portico.policy.ask import ask_outcome
from portico.policy.netcheck import NetReport, Resolver, check_url
from portico.policy.prompters import trust_refusal
from portico.policy.secret_uses import secret_uses, secrets_reason
from portico.policy.trust_store import TrustStore, project_of, trust_digest
from portico.prompts import Notice, Prompter, TrustChoice, TrustRequest
from portico.runtime.hooks import ConnectionHooks, TrustVerdict

log = logging.getLogger(__name__)

STDIO_REASON = "it is a project server that runs a command on this computer"


ALLOW_PRIVATE_REASON = (
    "oauth.allow_private_endpoints is on: its sign-in may talk to private addresses, other "
    "loopback ports and plain http"
)


def review_reasons(spec: ServerSpec) -> list[str]:
    """Reasons to review a project server whatever its transport and address."""
    reasons: list[str] = []
    uses = secret_uses(spec)
    if uses:
        reasons.append(secrets_reason(uses))
    if spec.oauth is not None and spec.oauth.allow_private_endpoints:
        reasons.append(ALLOW_PRIVATE_REASON)
    if spec.replaces is not None and not spec.replaces.same_target:
        reasons.append(
            f"replaces your global server {spec.name} (different target): yours "
            f"({spec.replaces.source}) connects to {spec.replaces.target}; this one does not "
            "get its sign-in"
        )
    return reasons


def cost_lines(spec: ServerSpec) -> tuple[str, ...]:
    """The budget a review shows: the spend limit and each tool's cost."""
    unit = spec.cost_unit
    lines: list[str] = []
    if spec.spend_limit is not None:
        lines.append(f"spend limit: {spec.spend_limit:g} {unit} per chat")
    for tool, cost in spec.tool_costs:
        amount = f"{cost.low:g}-{cost.high:g}" if cost.is_range else f"{cost.low:g}"
        lines.append(f"tool {tool}: {amount} {unit}" + (f" ({cost.note})" if cost.note else ""))
    return tuple(lines)


def describe_target(spec: ServerSpec) -> str:
    if spec.transport is Transport.STDIO:
        return shlex.join([spec.command or "", *spec.args])
    return mask_url(spec.url or "")  # a review never shows a password in the URL


@dataclass(frozen=True)
class Review:
    """One pending (or just asked) review: the request shown and what the check found."""

    spec: ServerSpec
    request: TrustRequest
    report: NetReport | None = None


def _key(spec: ServerSpec) -> tuple[str, str, str]:
    return (str(project_of(spec)), spec.name, trust_digest(spec))


class TrustGate:
    """The policy's trust gate. ``ask=False`` only parks servers (the app asks later)."""

    def __init__(
        self,
        prompter: Prompter,
        *,
        store: TrustStore | None = None,
        resolver: Resolver | None = None,
        question_timeout: float | None = None,
        ask: bool = True,
    ) -> None:
        self.prompter = prompter
        self.store = store or TrustStore()
        self.resolver = resolver
        self.question_timeout = question_timeout
        self.ask = ask
        self._once: set[tuple[str, str, str]] = set()
        self._pins: dict[tuple[str, str, str], dict[str, tuple[str, ...]]] = {}
        self._pins_by_name: dict[str, dict[str, tuple[str, ...]]] = {}
        self.pending: dict[str, Review] = {}

    # --- hooks ---------------------------------------------------------------------
    def install(self, hooks: ConnectionHooks) -> ConnectionHooks:
        hooks.trust_gate = self.__call__
        hooks.pinned_addresses = self.pinned_addresses
        return hooks

    def pinned_addresses(self, spec: ServerSpec) -> dict[str, list[str]] | None:
        pins = self._pins.get(_key(spec)) if spec.source.scope is Scope.PROJECT else None
        if pins is None:
            pins = self._pins_by_name.get(spec.name)
        return {host: list(ips) for host, ips in pins.items()} if pins else None

    def _pin(self, spec: ServerSpec, addresses: Mapping[str, tuple[str, ...]]) -> None:
        if not addresses:
            return
        pins = dict(addresses)
        self._pins.setdefault(_key(spec), pins)
        self._pins_by_name[spec.name] = self._pins[_key(spec)]

    # --- the gate ------------------------------------------------------------------
    async def __call__(self, spec: ServerSpec) -> TrustVerdict:
        if spec.source.scope is not Scope.PROJECT:
            return TrustVerdict(True)
        key = _key(spec)
        review = await self.check(spec)
        if review is None:  # nothing to review: a public HTTPS address
            return TrustVerdict(True, pinned=self._pins.get(key))
        if key in self._once:
            return TrustVerdict(True, pinned=self._pins.get(key))
        decision = self.store.get(Path(key[0]), key[1], key[2])
        dns_failed = review.report is not None and review.report.dns_failed
        if decision == "trust" and not dns_failed:
            self._pin(spec, review.report.addresses if review.report else {})
            return TrustVerdict(True, pinned=self._pins.get(key))
        if decision == "reject":
            return TrustVerdict(
                False,
                (
                    f"server '{spec.name}' in {spec.source.path} was rejected at a trust "
                    f"review; run 'portico mcp trust {spec.name}' to review it again",
                ),
                rejected=True,
            )
        if not self.ask:
            self.pending[spec.name] = review
            return self._waiting(review, trust_refusal(review.request))
        return await self.ask_and_apply(review)

    async def review(self, spec: ServerSpec) -> TrustVerdict:
        """Ask about ``spec`` now, whatever was decided before (Review trust… in the app)."""
        review = await self.check(spec)
        if review is None:
            return TrustVerdict(True, pinned=self._pins.get(_key(spec)))
        return await self.ask_and_apply(review)

    async def ask_and_apply(self, review: Review) -> TrustVerdict:
        """Ask the person and apply the answer; declined, aborted or refused: still waiting."""
        outcome = await ask_outcome(
            self.prompter.review_trust(review.request), self.question_timeout
        )
        if not outcome.answered or outcome.answer in (None, TrustChoice.DECLINE):
            self.pending[review.request.server] = review
            message = (
                outcome.message if outcome.ended_by == "refused" else trust_refusal(review.request)
            )
            return self._waiting(review, message)
        assert outcome.answer is not None
        return await self.apply(review, outcome.answer)

    async def check(self, spec: ServerSpec) -> Review | None:
        """What a review of ``spec`` would show, or None if it may start without one."""
        key = _key(spec)
        report: NetReport | None = None
        reasons: list[str] = []
        extra = review_reasons(spec)
        if spec.transport is Transport.STDIO:
            reasons.append(STDIO_REASON)
        else:
            pinned = self._pins.get(key)
            if pinned is not None:
                # Pinned at an earlier review: never ask DNS again in this process.
                report = await check_url(spec.url or "", _pinned_resolver(pinned))
            else:
                report = await check_url(spec.url or "", self.resolver)
            if report.clean and not extra:
                self._pin(spec, report.addresses)
                return None
            reasons.extend(report.reasons)
        reasons.extend(extra)
        request = TrustRequest(
            server=spec.name,
            source=str(spec.source),
            project=str(project_of(spec)),
            transport=str(spec.transport),
            target=describe_target(spec),
            env_names=tuple(name for name, _ in spec.env),
            header_names=tuple(name for name, _ in spec.headers),
            reasons=tuple(reasons),
            can_persist=not (report is not None and report.dns_failed),
            secrets=tuple(use.line for use in secret_uses(spec)),
            trust_level=str(spec.trust),
            costs=cost_lines(spec),
        )
        return Review(spec, request, report)

    async def apply(self, review: Review, choice: TrustChoice) -> TrustVerdict:
        """Carry out a decision (from the prompt, the CLI or the app)."""
        spec = review.spec
        key = _key(spec)
        addresses = review.report.addresses if review.report else {}
        if choice is TrustChoice.REJECT:
            self.store.record(spec, "reject")
            self.pending.pop(spec.name, None)
            self._once.discard(key)
            # Only the person's own trust store records it: the project's shared file is
            # never written, so a later review can turn the server back on.
            return TrustVerdict(
                False, (f"server '{spec.name}' was rejected at its trust review",), rejected=True
            )
        if choice is TrustChoice.TRUST:
            if review.request.can_persist:
                self.store.record(spec, "trust")
            else:
                await self._notify(
                    "warning",
                    f"trust for '{spec.name}' was not saved because the DNS lookup of its "
                    f"host failed; it connects for this run only and is reviewed again next "
                    f"time",
                    spec.name,
                )
                self._once.add(key)
        elif choice is TrustChoice.ONCE:
            self._once.add(key)
        else:
            self.pending[spec.name] = review
            return self._waiting(review, trust_refusal(review.request))
        self.pending.pop(spec.name, None)
        self._pin(spec, addresses)
        return TrustVerdict(True, pinned=self._pins.get(key))

    async def decide(self, spec: ServerSpec, choice: TrustChoice) -> TrustVerdict:
        """Decide for ``spec`` without asking (``portico mcp trust``, the app's review)."""
        review = await self.check(spec)
        if review is None:
            return TrustVerdict(True, pinned=self._pins.get(_key(spec)))
        return await self.apply(review, choice)

    def _waiting(self, review: Review, message: str) -> TrustVerdict:
        return TrustVerdict(False, (message, *review.request.reasons))

    async def _notify(self, level: str, text: str, server: str) -> None:
        try:
            await self.prompter.notify(Notice(level, text, server))  # type: ignore[arg-type]
        except Exception:
            log.warning("%s: %s", server, text)


def _pinned_resolver(pins: Mapping[str, tuple[str, ...]]) -> Resolver:
    async def resolve(host: str, port: int) -> list[str]:
        if host in pins:
            return list(pins[host])
        raise OSError(f"'{host}' was not resolved at the review")

    return resolve


def with_scope(spec: ServerSpec, scope: Scope) -> ServerSpec:
    """A copy of ``spec`` with another scope (tests and importers)."""
    return replace(spec, source=replace(spec.source, scope=scope))
