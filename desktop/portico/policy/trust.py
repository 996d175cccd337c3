"""Project-server trust: the gate every connection passes before it starts.

- Global servers are trusted to start.
- Project stdio servers wait for a review (``AwaitingTrust``) unless this exact config was
  trusted before (see :mod:`portico.policy.trust_store`).
- Project HTTP servers wait when the URL is plaintext, carries credentials, does not
  resolve, or resolves to any non-public address; a public HTTPS address connects.
- Whatever the transport and address, a project server waits when it references any of
  your secrets (each listed with where it goes), replaces a global server of the same
  name (with another target, or with the same one, whose sign-in it would use), or is
  looser than your rules in any policy-bearing key (``ServerSpec.loosened``: trust, tool
  filters, sampling, elicitation, ``oauth.allow_private_endpoints``, ``ca_cert``, roots;
  the table is ``portico.config.project_rules.SERVER_RULES``), each named in plain words.
- A project server is never connected to a link-local address or a cloud metadata
  service (``netcheck.never_dialled``), reviewed or not.
- The review shows the whole resolved launch (command, every argument, the working
  folder, every env value and header as written, the URL and the addresses it resolves
  to), the trust level, costs, secrets, loosenings and the project files it pins. The
  stored decision binds to everything that decides what the server may do or receive
  (``trust_store.trust_digest``), to the contents of the project files the launch names
  (``launch_files``) and to the address classes reviewed: a change asks again.
- The addresses seen at the review are pinned for the rest of the process
  (:meth:`TrustGate.pinned_addresses`, used by the HTTP client through the hooks).

Use one :class:`TrustGate` per process and plug it into ``ConnectionHooks`` with
:meth:`TrustGate.install`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from portico.config.masking import is_secret_key, mask_url, mask_value
from portico.config.model import Scope, ServerSpec, Transport
from portico.policy.approvals import canonical_json
from portico.policy.ask import ask_outcome
from portico.policy.launch_files import PinnedFile, pinned_files
from portico.policy.netcheck import (
    NetReport,
    Resolver,
    address_kind,
    address_kinds,
    check_url,
    never_dialled,
)
from portico.policy.prompters import trust_refusal
from portico.policy.secret_uses import secret_uses, secrets_reason
from portico.policy.trust_store import Bound, TrustStore, project_of, trust_digest
from portico.prompts import Notice, Prompter, TrustChoice, TrustRequest
from portico.runtime.hooks import ConnectionHooks, TrustVerdict
from portico.runtime.sandbox.describe import sandbox_rules
from portico.runtime.sandbox.probe import sandbox_method

log = logging.getLogger(__name__)

STDIO_REASON = "it is a project server that runs a command on this computer"
LINK_STDIO_REASON = "it runs a command on this computer"
LINK_REASON = (
    "it was added from a portico:// link (from_link in your config): a web page wrote it, "
    "so it is reviewed before it first connects"
)


def is_reviewed(spec: ServerSpec) -> bool:
    """Whether ``spec`` passes the trust gate: a project server, or one added from a
    ``portico://`` link (written to your global file, but by a web page)."""
    return spec.source.scope is Scope.PROJECT or spec.from_link


def review_reasons(spec: ServerSpec) -> list[str]:
    """Reasons to review a project server whatever its transport and address."""
    reasons: list[str] = [LINK_REASON] if spec.from_link else []
    uses = secret_uses(spec)
    if uses:
        reasons.append(secrets_reason(uses))
    if spec.loosened:
        count = len(spec.loosened)
        what = "in one way" if count == 1 else f"in {count} ways"
        # each face lists the loosenings themselves (TrustRequest.loosenings)
        reasons.append(f"it is looser than your rules for this server {what}")
    private = spec.oauth is not None and spec.oauth.allow_private_endpoints
    if private and not any("allow_private_endpoints" in x for x in spec.loosened):
        reasons.append(
            "oauth.allow_private_endpoints is on: its sign-in may talk to private addresses, "
            "other loopback ports and plain http"
        )
    if spec.replaces is not None and not spec.replaces.same_target:
        reasons.append(
            f"replaces your global server {spec.name} (different target): yours "
            f"({spec.replaces.source}) connects to {spec.replaces.target}; this one does not "
            "get its sign-in"
        )
    elif spec.replaces is not None:
        reasons.append(
            f"replaces your global server {spec.name} ({spec.replaces.source}) with the same "
            "target: once trusted it uses your sign-in to it, with the project's settings"
        )
    return reasons


def _cwd_line(spec: ServerSpec, project_folder: str | None = None) -> str:
    project: Path | None = None
    if spec.source.scope is Scope.PROJECT:
        project = Path(project_folder) if project_folder is not None else project_of(spec)
    if not spec.cwd:
        where = str(project) if project is not None else "your home folder"
        return f"cwd: {where} (not set: the {'project folder' if project else 'default'})"
    given = Path(os.path.expanduser(spec.cwd))
    if given.is_absolute() or project is None:
        return f"cwd: {given}"
    return f"cwd: {project / given} ({spec.cwd} in the project folder)"


def _env_shown(name: str, value: str) -> str:
    """An env value as the review shows it: as written (a literal such as NODE_OPTIONS'
    ``--require ./x.js`` changes what runs), unless its name says it holds a secret."""
    return mask_value(value) if is_secret_key(name) else value


def launch_lines(
    spec: ServerSpec, report: NetReport | None = None, project: str | None = None
) -> tuple[str, ...]:
    """Everything the launch runs or sends, one line each (values as written: a secret
    reference shows its name, never its value). ``project``: the canonical project
    folder when the caller has it (else resolved here)."""
    lines: list[str] = []
    if spec.transport is Transport.STDIO:
        lines.append(f"command: {spec.command or ''}")
        lines += [f"argument {i}: {arg}" for i, arg in enumerate(spec.args, 1)]
        lines.append(_cwd_line(spec, project))
        lines += [f"env {name} = {_env_shown(name, value)}" for name, value in spec.env]
        return tuple(lines)
    lines.append(f"url: {mask_url(spec.url or '')}")
    lines += [f"header {name} = {mask_value(value)}" for name, value in spec.headers]
    ident = spec.identity_header
    if ident is not None:
        value = "the active profile name" if ident.value_from == "profile" else ident.value
        lines.append(f"header {ident.name} = {value}")
    if spec.client_cert is not None:
        lines.append(f"client certificate: {spec.client_cert.cert}")
    if report is not None:
        for host, ips in report.addresses.items():
            shown = ", ".join(f"{ip} ({address_kind(ip)})" for ip in ips)
            lines.append(f"address: {host} \u2192 {shown}")
    return tuple(lines)


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
    """One pending (or just asked) review: what the check found, and the request shown.

    ``bound``: what a decision binds to beside the config (pinned files, address
    classes). ``blocked``: why it may never connect, whatever the person says. ``key``:
    (canonical project folder, name, trust digest). ``request`` is built when first
    asked for (a gate that finds a stored decision never shows it) from what the check
    found, so it shows exactly the files and addresses the decision binds to."""

    spec: ServerSpec
    key: tuple[str, str, str]
    reasons: tuple[str, ...] = ()
    report: NetReport | None = None
    files: tuple[PinnedFile, ...] = ()
    bound: Bound = field(default_factory=dict)
    blocked: str | None = None

    @functools.cached_property
    def request(self) -> TrustRequest:
        spec, report = self.spec, self.report
        return TrustRequest(
            server=spec.name,
            source=str(spec.source),
            project=self.key[0],
            transport=str(spec.transport),
            target=describe_target(spec),
            env_names=tuple(name for name, _ in spec.env),
            header_names=tuple(name for name, _ in spec.headers),
            reasons=self.reasons,
            can_persist=self.can_persist,
            secrets=tuple(use.line for use in secret_uses(spec)),
            trust_level=str(spec.trust),
            costs=cost_lines(spec),
            launch=launch_lines(spec, report, self.key[0]),
            loosenings=spec.loosened,
            pinned_files=tuple(f.line for f in self.files),
            sandbox=sandbox_rules(spec),
        )

    @property
    def can_persist(self) -> bool:
        """False while DNS fails: only once / reject make sense."""
        return not (self.report is not None and self.report.dns_failed)


def _bound(files: tuple[PinnedFile, ...], report: NetReport | None) -> Bound:
    bound: Bound = {}
    if files:
        bound["files"] = [[f.path, f.digest] for f in files]
    if report is not None and report.addresses:
        bound["net"] = list(address_kinds(report.addresses))
    return bound


def _once_key(review: Review) -> tuple[str, str, str]:
    project, name, digest = review.key
    return (project, name, digest + canonical_json(review.bound))


def _key(spec: ServerSpec) -> tuple[str, str, str]:
    """(canonical project folder, name, trust digest). A gate's call asks for it several
    times per spec (its check, the once set, the store, the pins), and each costs a
    digest of the spec and a path resolution: remembered per spec (specs are frozen)."""
    try:
        return _remembered_key(spec)
    except TypeError:  # a spec holding an unhashable value: computed every time
        return _computed_key(spec)


def _computed_key(spec: ServerSpec) -> tuple[str, str, str]:
    return (str(project_of(spec)), spec.name, trust_digest(spec))


_remembered_key = functools.lru_cache(maxsize=2048)(_computed_key)


class _PinBatch:
    """Pins the launch files of every spec asked for in one turn of the loop in one
    worker-thread hop: a config applied at once has each project stdio server's gate ask
    together, and a hop each cost more than the pinning (0.3 ms of CPU per server)."""

    def __init__(self) -> None:
        self._waiting: list[tuple[ServerSpec, asyncio.Future[tuple[PinnedFile, ...]]]] = []

    async def pins(self, spec: ServerSpec) -> tuple[PinnedFile, ...]:
        loop = asyncio.get_running_loop()
        if self._waiting and self._waiting[0][1].get_loop() is not loop:
            self._waiting = []  # left by a loop that ended before its turn came
        future: asyncio.Future[tuple[PinnedFile, ...]] = loop.create_future()
        self._waiting.append((spec, future))
        if len(self._waiting) == 1:
            loop.call_soon(self._flush, loop)
        return await future

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        batch, self._waiting = self._waiting, []
        specs = [spec for spec, _ in batch]
        done = loop.run_in_executor(None, _pin_all, specs)

        def hand_out(done: asyncio.Future[list[tuple[PinnedFile, ...] | BaseException]]) -> None:
            failed = done.exception() if not done.cancelled() else asyncio.CancelledError()
            for i, (_, future) in enumerate(batch):
                if future.done():
                    continue
                result = failed or done.result()[i]
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)

        done.add_done_callback(hand_out)


def _pin_all(specs: list[ServerSpec]) -> list[tuple[PinnedFile, ...] | BaseException]:
    out: list[tuple[PinnedFile, ...] | BaseException] = []
    for spec in specs:
        try:
            out.append(pinned_files(spec))
        except Exception as exc:  # one server's failure is its own
            out.append(exc)
    return out


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
        self._files = _PinBatch()
        self.pending: dict[str, Review] = {}

    # --- hooks ---------------------------------------------------------------------
    def install(self, hooks: ConnectionHooks) -> ConnectionHooks:
        hooks.trust_gate = self.__call__
        hooks.pinned_addresses = self.pinned_addresses
        return hooks

    def pinned_addresses(self, spec: ServerSpec) -> dict[str, list[str]] | None:
        pins = self._pins.get(_key(spec)) if is_reviewed(spec) else None
        if pins is None:
            pins = self._pins_by_name.get(spec.name)
        return {host: list(ips) for host, ips in pins.items()} if pins else None

    def _pin(
        self,
        spec: ServerSpec,
        addresses: Mapping[str, tuple[str, ...]],
        key: tuple[str, str, str] | None = None,
    ) -> None:
        if not addresses:
            return
        key = key or _key(spec)
        self._pins_by_name[spec.name] = self._pins.setdefault(key, dict(addresses))

    # --- the gate ------------------------------------------------------------------
    async def __call__(
        self, spec: ServerSpec, *, asking: Callable[[], None] | None = None
    ) -> TrustVerdict:
        if not is_reviewed(spec):
            return TrustVerdict(True)
        review = await self.check(spec)
        if review is None:  # nothing to review: a public HTTPS address
            return TrustVerdict(True, pinned=self._pins.get(_key(spec)))
        key = review.key
        if review.blocked is not None:
            return self._blocked(review)
        if self._once and _once_key(review) in self._once:
            return TrustVerdict(True, pinned=self._pins.get(key))
        decision = self.stored(review)
        if decision == "trust" and review.can_persist:
            self._pin(spec, review.report.addresses if review.report else {}, key)
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
        if asking is not None:
            asking()
        return await self.ask_and_apply(review)

    async def review(self, spec: ServerSpec) -> TrustVerdict:
        """Ask about ``spec`` now, whatever was decided before (Review trust… in the app)."""
        review = await self.check(spec)
        if review is None:
            return TrustVerdict(True, pinned=self._pins.get(_key(spec)))
        if review.blocked is not None:
            return self._blocked(review)
        return await self.ask_and_apply(review)

    def stored(self, review: Review) -> str | None:
        """The stored decision that applies to ``review``: a rejection of this config
        stands whatever it points at; a trust only for the same files and classes."""
        project, name, digest = review.key
        decision = self.store.get(Path(project), name, digest)
        if decision == "trust":
            return self.store.get(Path(project), name, digest, review.bound)
        return decision

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
        files: tuple[PinnedFile, ...] = ()
        blocked: str | None = None
        reasons: list[str] = []
        extra = review_reasons(spec)
        if spec.transport is Transport.STDIO:
            project = spec.source.scope is Scope.PROJECT
            reasons.append(STDIO_REASON if project else LINK_STDIO_REASON)
            if project:
                files = await self._files.pins(spec)
            if spec.sandboxed:
                # the review names the method and its limits from the start (asked once
                # per process, off the GUI thread): not only after the first launch
                await sandbox_method()
        else:
            pinned = self._pins.get(key)
            if pinned is not None:
                # Pinned at an earlier review: never ask DNS again in this process.
                report = await check_url(spec.url or "", _pinned_resolver(pinned))
            else:
                report = await check_url(spec.url or "", self.resolver)
            if is_reviewed(spec):
                blocked = never_dialled(report.host, ()) or next(
                    (
                        why
                        for host, ips in report.addresses.items()
                        if (why := never_dialled(host, ips)) is not None
                    ),
                    None,
                )
            if report.clean and not extra and blocked is None:
                self._pin(spec, report.addresses, key)
                return None
            reasons.extend(report.reasons)
        reasons.extend(extra)
        bound = _bound(files, report)
        moved = self._moved(key, bound)
        if moved:
            reasons.append(moved)
        return Review(spec, key, tuple(reasons), report, files, bound, blocked)

    def _moved(self, key: tuple[str, str, str], bound: Bound) -> str | None:
        """Why a decision for this very config no longer holds: its address class or a
        pinned file changed since (said as a reason of the new review)."""
        project, name, digest = key
        entry = self.store.entry(Path(project), name)
        if entry is None or entry.get("digest") != digest or entry.get("decision") != "trust":
            return None
        then, now = entry.get("net"), bound.get("net")
        if then is not None and now is not None and then != now:
            return (
                f"its address changed since you trusted it: it resolved to "
                f"{' and '.join(then)} addresses then, {' and '.join(now)} now"
            )
        old_files = {p: d for p, d in entry.get("files") or ()}
        changed = [p for p, d in bound.get("files") or () if old_files.get(p) != d]
        if changed:
            return "a project file its launch runs changed since you trusted it: " + ", ".join(
                changed
            )
        return None

    def _blocked(self, review: Review) -> TrustVerdict:
        spec = review.spec
        self.pending.pop(spec.name, None)
        return TrustVerdict(
            False,
            (
                f"project server '{spec.name}' is never connected: {review.blocked}, which "
                "a project server may not reach (cloud metadata services hand out this "
                "computer's credentials)",
            ),
            rejected=True,
        )

    async def apply(self, review: Review, choice: TrustChoice) -> TrustVerdict:
        """Carry out a decision (from the prompt, the CLI or the app)."""
        spec = review.spec
        key = review.key
        addresses = review.report.addresses if review.report else {}
        if review.blocked is not None:
            return self._blocked(review)
        if choice is TrustChoice.REJECT:
            self.store.record(spec, "reject")
            self.pending.pop(spec.name, None)
            self._once.discard(_once_key(review))
            # Only the person's own trust store records it: the project's shared file is
            # never written, so a later review can turn the server back on.
            return TrustVerdict(
                False, (f"server '{spec.name}' was rejected at its trust review",), rejected=True
            )
        if choice is TrustChoice.TRUST:
            if review.can_persist:
                self.store.record(spec, "trust", review.bound)
            else:
                await self._notify(
                    "warning",
                    f"trust for '{spec.name}' was not saved because the DNS lookup of its "
                    f"host failed; it connects for this run only and is reviewed again next "
                    f"time",
                    spec.name,
                )
                self._once.add(_once_key(review))
        elif choice is TrustChoice.ONCE:
            self._once.add(_once_key(review))
        else:
            self.pending[spec.name] = review
            return self._waiting(review, trust_refusal(review.request))
        self.pending.pop(spec.name, None)
        self._pin(spec, addresses, key)
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
