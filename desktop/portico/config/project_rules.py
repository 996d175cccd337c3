"""A project may tighten, never loosen: how project files combine with the global ones.

Settings: a project value of a security setting (:data:`SECURITY_SETTINGS`) counts only
when it is at least as strict as the global value; otherwise it is ignored with a warning
naming file:line and the key. Every other setting of a project file overrides the global
one as before. A new security setting is one line in the table. (``models`` keys are never
read from a project file at all: see ``portico.config.models_config``.)

Servers: a project server with the name of a global server replaces it, but records what
it replaces (``ServerSpec.replaces``: the trust review says so, and the sign-in is shared
only when the target is identical) and keeps the stricter of the two budgets.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from portico.config import schema
from portico.config.masking import mask_url
from portico.config.model import (
    Diagnostic,
    Replaces,
    RuntimeSettings,
    ServerSpec,
    ToolCost,
    Transport,
)

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
}

_DEFAULTS = {f.name: f.default for f in fields(RuntimeSettings)}
_KEYS = {spec.field: spec.name for spec in schema.SETTINGS if spec.field}

Seen = Mapping[str, tuple[Any, Path, int]]  # field -> (value, file, line)

_IGNORED = "ignored: a project file may tighten but never loosen"


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
