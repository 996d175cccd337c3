"""The running Portico, for ``portico mcp list|tools|call|test``: when the discovery file
names a live endpoint, a command asks it (one request, no server started) and else goes
direct; ``-v`` says which, and why."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from portico.gateway.cli_client import LiveEndpoint, Unreachable, live_endpoint


def note(args: argparse.Namespace, text: str) -> None:
    if getattr(args, "verbose", False):
        print(f"portico: {text}", file=sys.stderr)


def ask(
    args: argparse.Namespace,
    method: str,
    path: str,
    *,
    body: Any = None,
) -> Any | None:
    """The running Portico's answer, or None (after ``-v`` said why) to go direct."""
    from portico.cli.common import project_of
    from portico.gateway.discovery import config_stamp

    if getattr(args, "direct", False):
        note(args, "direct (--direct)")
        return None
    live, why = live_endpoint()
    if live is None:
        note(args, f"direct: {why}")
        return None
    return _request(args, live, method, path, body, config_stamp(project_of(args)))


def _request(
    args: argparse.Namespace,
    live: LiveEndpoint,
    method: str,
    path: str,
    body: Any,
    stamp: str,
) -> Any | None:
    try:
        status, data = live.request(method, path, body, query={"config": stamp})
    except Unreachable as exc:
        note(args, f"direct: {exc}")
        return None
    if status != 200:
        why = data.get("error") if isinstance(data, dict) else None
        note(args, f"direct: {why or f'the running Portico answered {status}'}")
        return None
    note(args, f"via the running Portico at {live.where}")
    return data
