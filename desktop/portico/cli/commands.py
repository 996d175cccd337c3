"""The list of command modules. Each exposes ``register(groups: Groups) -> None``."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Groups:
    top: argparse._SubParsersAction[argparse.ArgumentParser]
    config: argparse._SubParsersAction[argparse.ArgumentParser]
    mcp: argparse._SubParsersAction[argparse.ArgumentParser]


# Modules are imported lazily by name so that a command's heavy imports (mcp, httpx2)
# only load when that command runs: each module imports them inside its handlers.
MODULES = (
    "portico.cli.config_cmds",
    "portico.cli.edit_cmds",
    "portico.cli.add_cmds",
    "portico.cli.runtime_cmds",
    "portico.cli.trust_cmds",
    "portico.cli.auth_cmds",
    "portico.cli.model_cmds",
    "portico.cli.chat_cmds",
    "portico.cli.serve_cmds",
    "portico.cli.connect_cmds",
)


# `portico mcp list|tools|call|test` build a parser of their own module only: a one-shot
# call answered by the running app then imports none of the config machinery.
RUNTIME_COMMANDS = frozenset({"list", "tools", "call", "test"})
RUNTIME_MODULE = "portico.cli.runtime_cmds"


def registrars(modules: tuple[str, ...] = MODULES) -> Iterator[Callable[[Groups], None]]:
    for name in modules:
        module = importlib.import_module(name)
        yield module.register
