"""A person who agrees to run sandboxed servers without a sandbox, for tests that are not
about the sandbox but start project (so sandboxed) stdio servers.

Only a machine that cannot sandbox (no user namespaces, as on some CI machines) asks the
question; elsewhere nothing here is used. The consent is the product's own
(``UnsandboxedConsent``), stored under the test's state dir.
"""

from __future__ import annotations

from pathlib import Path

from portico.config import load
from portico.config.model import Scope, ServerSpec
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.unsandboxed import UnsandboxedConsent
from portico.runtime.hooks import ConnectionHooks
from tests.helpers.person import ScriptedPerson


def agreeing_hooks(hooks: ConnectionHooks | None = None) -> ConnectionHooks:
    """``hooks`` (or empty ones) whose ``unsandboxed_ok`` says yes when asked."""
    hooks = hooks or ConnectionHooks()
    person = ScriptedPerson()
    person.agrees_unsandboxed()
    hooks.unsandboxed_ok = UnsandboxedConsent(person)
    return hooks


def agreed_before(spec: ServerSpec) -> None:
    """Store a yes for ``spec``, as if the person had agreed in an earlier run (for a
    ``portico`` run in a subprocess, where nobody can answer)."""
    UnsandboxedConsent(NonInteractivePrompter()).remember(spec)


def agreed_for_project(project: Path) -> None:
    """A yes stored for every stdio server of ``project``'s config as it is now (for the
    app's tests, whose person would otherwise meet a real question)."""
    for spec in load(project).servers:
        if spec.source.scope is Scope.PROJECT and spec.command:
            agreed_before(spec)
