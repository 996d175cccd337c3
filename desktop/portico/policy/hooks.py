"""Policy hooks for terminal commands (``portico mcp list|test|tools|call``).

The core cannot import a face, so the CLI registers how to make its Prompter
(:func:`set_cli_prompter_factory`, called by ``portico.cli.trust_cmds.register``); without
one, questions are refused with actionable messages (``NonInteractivePrompter``).
"""

from __future__ import annotations

from collections.abc import Callable

from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.prompts import Prompter
from portico.runtime.hooks import ConnectionHooks

_factory: Callable[[], Prompter] = NonInteractivePrompter
_current: Policy | None = None


def set_cli_prompter_factory(factory: Callable[[], Prompter]) -> None:
    global _factory
    _factory = factory


def cli_policy() -> Policy:
    """The one Policy of this CLI process (made on first use)."""
    global _current
    if _current is None:
        _current = Policy(_factory())
    return _current


def install_cli_hooks(hooks: ConnectionHooks) -> ConnectionHooks:
    return cli_policy().hooks(hooks)
