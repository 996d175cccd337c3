"""``portico config ...``: placeholder until the config layer lands."""

from __future__ import annotations

from portico.cli.commands import Groups


def register(groups: Groups) -> None:
    pass
