"""The roots Portico offers a server (``roots/list``, and roots asked for in a 2026
multi round-trip request).

- A project server gets its project folder as a ``file://`` root.
- A global server gets the folders of its ``roots`` setting (after loading, an unset one
  holds the top-level ``roots``): ``~`` expanded, only folders that exist right now.
- A server with neither is offered nothing, so Portico does not declare the roots
  capability to it.

The callback reads the server's current config on every request, so a reload that
changes ``roots`` needs no restart: the connection sends
``notifications/roots/list_changed`` and the server asks again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico import paths
from portico.config.model import Scope, ServerSpec
from portico.config.roots_check import expanded

if TYPE_CHECKING:
    import mcp_types as types


def project_folder(spec: ServerSpec) -> Path | None:
    """The folder of the project whose ``.portico/`` config defines ``spec``, if any."""
    if spec.source.scope is not Scope.PROJECT:
        return None
    folder = spec.source.path.parent
    if folder.name == paths.PROJECT_DIR_NAME:
        folder = folder.parent
    return folder.resolve()


def declares_roots(spec: ServerSpec) -> bool:
    """Whether Portico declares the roots capability to ``spec`` (fixed per session)."""
    return spec.source.scope is Scope.PROJECT or bool(spec.roots)


def folders(spec: ServerSpec) -> list[Path]:
    """The folders offered to ``spec`` now, in order, without duplicates."""
    project = project_folder(spec)
    if project is not None:
        return [project]
    out: list[Path] = []
    for text in spec.roots or ():
        folder = expanded(text)
        if folder.is_absolute() and folder.is_dir() and folder not in out:
            out.append(folder)
    return out


def roots_for(spec: ServerSpec) -> list[types.Root]:
    import mcp_types as types

    return [
        types.Root(uri=folder.as_uri(), name=folder.name or str(folder))  # type: ignore[arg-type]
        for folder in folders(spec)
    ]


def list_roots_callback(spec: ServerSpec, current: Callable[[], ServerSpec] | None = None) -> Any:
    """The Client's ``list_roots_callback`` for ``spec``, or None when it is offered no
    roots. ``current`` gives the config at request time (default: ``spec``)."""
    if not declares_roots(spec):
        return None
    now = current or (lambda: spec)

    async def list_roots(context: Any) -> types.ListRootsResult:
        import asyncio

        import mcp_types as types

        found = await asyncio.to_thread(roots_for, now())  # stats folders: off the loop
        return types.ListRootsResult(roots=found)

    return list_roots
