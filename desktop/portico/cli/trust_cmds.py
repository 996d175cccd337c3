"""``portico mcp trust NAME [--once|--accept|--reject]`` and ``portico mcp review``.

Project servers wait for a trust review before they start (see ``portico.policy.trust``).
``trust`` reviews one server: with a flag it decides at once, without one it shows the
review and asks (on a terminal). ``review`` lists every project server still waiting,
with the reasons.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from portico.cli.commands import Groups
from portico.cli.common import (
    CommandError,
    add_project_option,
    async_command,
    cli_services,
    err,
    load_config,
    server_named,
)
from portico.text import visible

if TYPE_CHECKING:
    from portico.config.model import ServerSpec
    from portico.runtime.hooks import ConnectionHooks


def register(groups: Groups) -> None:
    mcp = groups.mcp
    p = mcp.add_parser("trust", help="review a project server so it may start")
    p.add_argument("name", help="server name from the project config")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--once", action="store_true", help="connect it once now (nothing is saved)")
    how.add_argument("--accept", action="store_true", help="trust this exact config (saved)")
    how.add_argument(
        "--reject",
        action="store_true",
        help="reject it: saved in your own trust store (the project file is not changed)",
    )
    add_project_option(p)
    p.set_defaults(handler=cmd_trust)

    p = mcp.add_parser("review", help="list project servers waiting for a trust review")
    add_project_option(p)
    p.set_defaults(handler=cmd_review)


async def _trust(args: argparse.Namespace) -> int:
    from portico.policy.trust import is_reviewed
    from portico.prompts import TrustChoice

    config = load_config(args)
    linked = any(s.from_link for s in config.servers)
    spec = server_named(
        config,
        args.name,
        among=is_reviewed,
        listed_as="project servers and servers added from links" if linked else "project servers",
        next_step="run 'portico mcp review' to see the ones waiting",
    )
    if not is_reviewed(spec):
        print(f"'{spec.name}' comes from the global config ({spec.source}): it is trusted.")
        return 0
    services = cli_services(config)
    gate = services.policy.trust
    prompter = gate.prompter
    review = await gate.check(spec)
    if review is None:
        print(f"'{spec.name}' is a public HTTPS server: it connects without a review.")
        return 0
    if args.accept:
        choice = TrustChoice.TRUST
        if not review.request.can_persist:
            raise CommandError(
                f"cannot save trust for '{spec.name}' while its DNS lookup fails: "
                + "; ".join(review.request.reasons)
            )
    elif args.reject:
        choice = TrustChoice.REJECT
    elif args.once:
        choice = TrustChoice.ONCE
    else:
        from portico.policy.ask import ask_outcome

        outcome = await ask_outcome(prompter.review_trust(review.request))
        if not outcome.answered or outcome.answer in (None, TrustChoice.DECLINE):
            raise CommandError(outcome.message or f"'{spec.name}' is still waiting for its review")
        assert outcome.answer is not None
        choice = outcome.answer
    verdict = await gate.apply(review, choice)
    if choice is TrustChoice.REJECT:
        print(f"Rejected '{spec.name}'; it is disabled in {spec.source.path}.")
        return 0
    if choice is TrustChoice.TRUST:
        print(f"Trusted '{spec.name}' for this exact config; it starts from now on.")
        return 0 if verdict.allowed else 1
    return await _connect_once(spec, services.hooks)


async def _connect_once(spec: ServerSpec, hooks: ConnectionHooks) -> int:
    """--once: connect now through the runtime, show what it offers, stop again."""
    from portico.runtime.connection import Connection
    from portico.runtime.events import EventBus, Status

    connection = Connection(spec, bus=EventBus(), hooks=hooks)
    await connection.start()
    try:
        # connect_timeout already bounds the connect; the margin covers start-up and stop.
        state = await connection.wait_settled(spec.connect_timeout + 10)
    except TimeoutError:
        err(
            f"'{spec.name}' did not finish connecting within {spec.connect_timeout + 10:g} s "
            f"(connect_timeout is {spec.connect_timeout:g} s in {spec.source})"
        )
        return 1
    finally:
        tools = list(connection.tools)
        await connection.stop()
    if state.status is Status.RUNNING:
        print(f"Connected to '{state.name}' once: {len(tools)} tools. Nothing was saved.")
        return 0
    err(f"'{state.name}' did not connect: {state.status}: {state.error or ''}")
    return 1


async def _review(args: argparse.Namespace) -> int:
    from portico.policy.prompters import (
        NonInteractivePrompter,
        review_detail_lines,
        trust_level_line,
    )
    from portico.policy.trust import TrustGate, is_reviewed

    config = load_config(args)
    gate = TrustGate(NonInteractivePrompter(), ask=False)
    waiting = 0
    for spec in config.servers:
        if not is_reviewed(spec) or not spec.enabled:
            continue
        review = await gate.check(spec)
        if review is None:
            continue
        decision = gate.stored(review)
        if decision == "trust" and review.request.can_persist:
            continue
        waiting += 1
        request = review.request
        state = "rejected" if decision == "reject" else "waiting"
        _say(f"{request.server} ({state}) from {request.source}")
        _say(f"  {'command' if request.transport == 'stdio' else 'url'}: {request.target}")
        if request.env_names:
            _say(f"  env: {', '.join(request.env_names)}")
        if request.header_names:
            _say(f"  headers: {', '.join(request.header_names)}")
        _say(f"  trust: {trust_level_line(request.trust_level)}")
        for detail in review_detail_lines(request):
            _say(f"  {detail}")
        for cost in request.costs:
            _say(f"  cost: {cost}")
        for line in request.secrets:
            _say(f"  secret: {line}")
        for reason in request.reasons:
            _say(f"  - {reason}")
        _say(f"  review it: portico mcp trust {request.server}")
    if not waiting:
        print("No project server is waiting for a trust review.")
    return 0


cmd_trust = async_command(_trust)
cmd_review = async_command(_review)


def _say(line: str) -> None:
    """A review line: config text shown as written, escapes visible (never obeyed)."""
    print(visible(line))
