"""A project may tighten, never loosen: how project files combine with the global ones.

Settings: a project value of a security setting (:data:`SECURITY_SETTINGS`) counts only
when it is at least as strict as the global value; otherwise it is ignored with a warning
naming file:line and the key. Every other setting of a project file overrides the global
one as before. A new security setting is one line in the table. (``models`` keys are never
read from a project file at all: see ``portico.config.models_config``.)

Servers: a project server with the name of a global server replaces it, but records what
it replaces (``ServerSpec.replaces``: the trust review says so, and the sign-in is shared
only after a review, and only when the target is identical) and keeps the stricter of the
two budgets.

Every policy-bearing key of a project server is held against the person's value: the
global server of the same name, or the default where the person set none
(:data:`SERVER_RULES`, one row per key). Each way the project's value is looser is kept in
``ServerSpec.loosened`` in plain words ("trust full: calls run without asking"); such a
server waits for a trust review that names each one, whatever its transport, and the
review's decision binds to those words. Budgets are the exception: a project's looser
budget is never used, reviewed or not (``replacing``). A new policy-bearing key is one
row in :data:`SERVER_RULES` (``sandbox.network.learn`` is the latest): a function
``(project spec, person's spec) -> list of loosenings in plain words``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from portico.config import schema
from portico.config.masking import mask_url
from portico.config.model import (
    Diagnostic,
    Replaces,
    RuntimeSettings,
    Scope,
    ServerSpec,
    ToolCost,
    Transport,
    TrustLevel,
)
from portico.config.sandbox_paths import base_folder, inside, resolved

# (project value, global value) -> True when the project value is at least as strict.
Stricter = Callable[[Any, Any], bool]

_APPROVALS_RANK = {"off": 0, "on": 1}

SECURITY_SETTINGS: dict[str, Stricter] = {
    # RuntimeSettings field: the rule
    "approvals_mode": lambda p, g: _APPROVALS_RANK.get(p, 1) >= _APPROVALS_RANK.get(g, 1),
    "file_fallback_for_secrets": lambda p, g: not p or bool(g),  # plaintext files: opt-in
    # The client identity Portico presents to authorization servers is yours to choose.
    "oauth_client_metadata_url": lambda p, g: p == g,
    # The folders your global servers see: a project may offer fewer, never others.
    "default_roots": lambda p, g: set(p) <= set(g or ()),
    # Sandboxing every stdio server is yours to turn off, not a project's.
    "sandbox_all": lambda p, g: bool(p) or not g,
    # A title request sends the chat to the model once more: yours to turn on.
    "chat_model_titles": lambda p, g: not p or bool(g),
    # Whether the app listens for other clients, and where, is yours to decide.
    "endpoint_enabled": lambda p, g: not p or bool(g),
    "endpoint_port": lambda p, g: p == g,
    # The memory views take is yours to spend: a project may load fewer at once, not more.
    "chat_live_views": lambda p, g: p <= g,
    # What a chat offers the model: a project may narrow it (empty means all).
    "chat_servers": lambda p, g: not g or (bool(p) and set(p) <= set(g)),
    "chat_tools": lambda p, g: not g or (bool(p) and set(p) <= set(g)),
}

_DEFAULTS = {f.name: f.default for f in fields(RuntimeSettings)}
_KEYS = {spec.field: spec.name for spec in schema.SETTINGS if spec.field}

Seen = Mapping[str, tuple[Any, Path, int]]  # field -> (value, file, line)

_IGNORED = "ignored: a project file may tighten but never loosen"


def project_model(
    values: dict[str, Any], global_seen: Seen, project_seen: Seen, allowed: Callable[[str], bool]
) -> list[Diagnostic]:
    """A project's ``chat.model`` counts only for a provider the person allowed for
    projects (``projects: true``): a cloned repository must not reach a paid model. Else
    the person's value stays, with a warning naming file:line."""
    if "chat_model" not in project_seen:
        return []
    value, path, line = project_seen["chat_model"]
    if allowed(str(value).split("/", 1)[0]):
        return []
    mine = global_seen.get("chat_model")
    if mine is None:
        values.pop("chat_model", None)
    else:
        values["chat_model"] = mine[0]
    return [
        Diagnostic(
            "warning",
            f"{_IGNORED} chat.model ({value}: its provider is not allowed for projects); "
            "write projects: true on that provider in your own config if you mean it",
            path,
            line,
            None,
            "chat.model",
        )
    ]


def is_security_note(diagnostic: Diagnostic) -> bool:
    """A warning every face shows, even where it lists errors only: a project setting
    that was ignored because it would loosen yours."""
    return diagnostic.message.startswith(_IGNORED)


def _shown(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def merge_settings(
    global_seen: Seen, project_seen: Seen
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The effective setting values and the warnings about ignored project values."""
    values = {field: value for field, (value, _path, _line) in global_seen.items()}
    notes: list[Diagnostic] = []
    for field, (value, path, line) in project_seen.items():
        rule = SECURITY_SETTINGS.get(field)
        current = values.get(field, _DEFAULTS.get(field))
        if rule is not None and not rule(value, current):
            key = _KEYS.get(field, field)
            notes.append(
                Diagnostic(
                    "warning",
                    f"{_IGNORED} {key} (your "
                    f"setting is {_shown(current)}); set it in your own config.yaml if you "
                    "mean it",
                    path,
                    line,
                    None,
                    key,
                )
            )
            continue
        values[field] = value
    return values, notes


# --- policy-bearing server keys: the person's value is the floor -------------------------

# (project spec, the person's spec) -> each loosening, in plain words; empty: not looser.
ServerRule = Callable[[ServerSpec, ServerSpec], list[str]]

_TRUST_RANK = {TrustLevel.UNTRUSTED: 0, TrustLevel.DEFAULT: 1, TrustLevel.FULL: 2}


def _yours(person: ServerSpec, value: object) -> str:
    """How a loosening names what it loosens: your global server's value or the default."""
    if person.source.scope is Scope.GLOBAL:
        return f" (yours: {value})"
    return f" (the default: {value})"


def _trust_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    if _TRUST_RANK[p.trust] <= _TRUST_RANK[g.trust]:
        return []
    if p.trust is TrustLevel.FULL:
        what = "trust full: calls run without asking (turns approvals off for this server)"
    else:
        what = "trust default: calls of read-only tools run without asking"
    return [what + _yours(g, g.trust)]


def _match(name: str, entry: str) -> bool:
    """``tools`` matching (``portico.runtime.filtering``): exact names or fnmatch globs."""
    return fnmatchcase(name, entry) if any(c in entry for c in "*?[") else name == entry


def _tools_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    mine, theirs = g.tools, p.tools
    out: list[str] = []
    if mine.include:  # yours decides alone (include wins over exclude)
        if not theirs.include:
            out.append(f"removes your tools.include list (only {', '.join(mine.include)})")
        else:
            extra = [e for e in theirs.include if e not in mine.include]
            if extra:
                out.append(f"offers tools your tools.include leaves out: {', '.join(extra)}")
    else:
        for entry in mine.exclude:
            if theirs.include:  # theirs decides alone: does it offer what you exclude?
                kept = any(_match(i, entry) or _match(entry, i) for i in theirs.include)
            else:
                kept = not any(_match(entry, e) for e in theirs.exclude)
            if kept:
                out.append(f"removes your exclusion of {entry} (tools.exclude)")
    for key in ("resources", "prompts"):
        if getattr(theirs, key) and not getattr(mine, key):
            out.append(f"offers its {key}, which you turned off (tools.{key})")
    return out


def _sampling_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    mine, theirs = g.sampling, p.sampling
    if not theirs.enabled:
        return []
    if not mine.enabled:
        return [
            f"lets it use your model for sampling up to {theirs.max_rpm:,} a minute "
            "(you turned sampling off)"
        ]
    out: list[str] = []
    if theirs.max_rpm > mine.max_rpm:
        out.append(
            f"lets it use your model for sampling up to {theirs.max_rpm:,} a minute"
            + _yours(g, f"{mine.max_rpm:,}")
        )
    if theirs.max_tokens_cap > mine.max_tokens_cap:
        out.append(
            f"lets one sampling request ask for up to {theirs.max_tokens_cap:,} tokens"
            + _yours(g, f"{mine.max_tokens_cap:,}")
        )
    if theirs.max_tool_rounds > mine.max_tool_rounds:
        out.append(
            f"lets a sampling request run up to {theirs.max_tool_rounds} tool rounds"
            + _yours(g, mine.max_tool_rounds)
        )
    if theirs.model is not None and theirs.model != mine.model:
        out.append(f"chooses the model that answers its sampling: {theirs.model}")
    if mine.allowed_models and (
        not theirs.allowed_models or set(theirs.allowed_models) - set(mine.allowed_models)
    ):
        out.append("lets its sampling use models your sampling.allowed_models leaves out")
    return out


def _elicitation_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    mine, theirs = g.elicitation, p.elicitation
    if not theirs.enabled:
        return []
    if not mine.enabled:
        return ["lets it ask you questions (you turned elicitation off)"]
    if theirs.allow_url and not mine.allow_url:
        return ["lets it send you web addresses to open (elicitation.allow_url)"]
    return []


def _network_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    out: list[str] = []
    mine = g.oauth is not None and g.oauth.allow_private_endpoints
    if p.oauth is not None and p.oauth.allow_private_endpoints and not mine:
        out.append(
            "oauth.allow_private_endpoints is on: its sign-in may talk to private addresses, "
            "other loopback ports and plain http"
        )
    if p.ca_cert and p.ca_cert != g.ca_cert:
        out.append("trusts another certificate authority for its TLS (ca_cert)")
    return out


def _roots_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    # A project server is offered its own project folder only (its ``roots`` is ignored
    # with a warning), so only roots beyond yours could loosen anything.
    extra = sorted(set(p.roots or ()) - set(g.roots or ()))
    return [f"offers it folders you did not: {', '.join(extra)} (roots)"] if extra else []


def _sandbox_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    """Off, or reading / writing / reaching more than yours (a project folder is
    readable anyway, so reading inside it widens nothing)."""
    if p.transport is not Transport.STDIO:
        return []
    yours_off = g.source.scope is Scope.GLOBAL and g.sandbox.enabled is False
    if not p.sandboxed:
        if yours_off:
            return []
        return [
            "runs outside the sandbox: it may read and write all your files and reach any"
            " host (sandbox.enabled = false; the default: on for project servers)"
        ]
    if g.source.scope is Scope.GLOBAL and not g.sandboxed:
        return []  # yours runs unsandboxed: any sandbox is tighter
    mine_write = resolved(g, g.sandbox.write)
    mine_read = (*resolved(g, g.sandbox.read), *mine_write)
    project = str(base_folder(p))
    out: list[str] = []
    reads = [
        path
        for path in resolved(p, p.sandbox.read)
        if not inside(path, project) and not any(inside(path, m) for m in mine_read)
    ]
    if reads:
        out.append(f"may read outside its project: {', '.join(reads)} (sandbox.read)")
    writes = [
        path
        for path in resolved(p, p.sandbox.write)
        if not any(inside(path, m) for m in mine_write)
    ]
    if writes:
        out.append(f"may write to {', '.join(writes)} (sandbox.write)")
    hosts = [h for h in p.sandbox.network_allow if h not in g.sandbox.network_allow]
    if hosts:
        out.append(f"may reach on the network: {', '.join(hosts)} (sandbox.network.allow)")
    return out


def _learn_rule(p: ServerSpec, g: ServerSpec) -> list[str]:
    """Learn mode is never a project's: its ``learn`` is ignored (``sandbox_learns``), and
    the review says the project asked for it."""
    if not p.sandbox.network_learn:
        return []
    return [
        "asks for the sandbox's learn mode, which would let it reach any host "
        "(sandbox.network.learn; a project cannot turn it on: ignored)"
    ]


SERVER_RULES: dict[str, ServerRule] = {
    # the keys a row covers: its rule. Budgets (spend_limit, tool_costs, cost_unit) are
    # never loosened at all: see ``replacing``. Add a new policy-bearing key here.
    "trust": _trust_rule,
    "tools": _tools_rule,
    "sampling": _sampling_rule,
    "elicitation": _elicitation_rule,
    "oauth.allow_private_endpoints, ca_cert": _network_rule,
    "roots": _roots_rule,
    "sandbox": _sandbox_rule,
    "sandbox.network.learn": _learn_rule,
}


def person_default(project: ServerSpec) -> ServerSpec:
    """The person's rules for a project server no global server shares a name with: the
    defaults of every key."""
    return ServerSpec(project.name, project.source, project.transport)


def loosenings(project: ServerSpec, person: ServerSpec) -> tuple[str, ...]:
    """Every way ``project`` is looser than ``person``, in the order of the table."""
    found: list[str] = []
    for rule in SERVER_RULES.values():
        found += rule(project, person)
    return tuple(found)


def with_loosenings(project: ServerSpec, person: ServerSpec | None) -> ServerSpec:
    """``project`` with ``loosened`` set against ``person`` (or the defaults)."""
    found = loosenings(project, person or person_default(project))
    return replace(project, loosened=found) if found else project


# --- servers that replace a global server --------------------------------------------------


def target_of(spec: ServerSpec) -> str:
    """What a server connects to, as compared and shown ("http https://x/mcp")."""
    if spec.transport is Transport.STDIO:
        return "stdio " + shlex.join([spec.command or "", *spec.args])
    return f"{spec.transport} {mask_url(spec.url or '')}"


def _same_target(a: ServerSpec, b: ServerSpec) -> bool:
    if a.transport is not b.transport:
        return False
    if a.transport is Transport.STDIO:
        return (a.command, a.args, a.cwd) == (b.command, b.args, b.cwd)
    return a.url == b.url


def _stricter_cost(a: ToolCost, b: ToolCost) -> ToolCost:
    return ToolCost(max(a.low, b.low), max(a.high, b.high), a.note or b.note)


def replacing(project: ServerSpec, global_: ServerSpec) -> tuple[ServerSpec, list[Diagnostic]]:
    """``project`` as it replaces ``global_``: what it replaces, and the stricter budget."""
    notes: list[Diagnostic] = []
    marked = replace(
        project,
        replaces=Replaces(
            source=str(global_.source),
            target=target_of(global_),
            same_target=_same_target(project, global_),
        ),
    )
    has_budget = global_.spend_limit is not None or bool(global_.tool_costs)
    if not has_budget:
        return marked, notes
    if project.cost_unit != global_.cost_unit:
        why = f"counts in {project.cost_unit}, not {global_.cost_unit}"
        notes.append(_budget_note(project, global_, why))
        return replace(
            marked,
            spend_limit=global_.spend_limit,
            tool_costs=global_.tool_costs,
            cost_unit=global_.cost_unit,
        ), notes
    limits = [x for x in (project.spend_limit, global_.spend_limit) if x is not None]
    limit = min(limits) if limits else None
    costs = dict(project.tool_costs)
    for tool, cost in global_.tool_costs:
        costs[tool] = _stricter_cost(costs[tool], cost) if tool in costs else cost
    merged = tuple(costs.items())
    if limit != project.spend_limit or merged != project.tool_costs:
        notes.append(_budget_note(project, global_, "is looser"))
    return replace(marked, spend_limit=limit, tool_costs=merged), notes


def _budget_note(project: ServerSpec, global_: ServerSpec, why: str) -> Diagnostic:
    return Diagnostic(
        "warning",
        f"replaces your global server {project.name} ({global_.source}) and keeps its "
        f"stricter spend_limit / tool_costs: the project's budget {why}",
        project.source.path,
        project.source.line,
        project.name,
    )
