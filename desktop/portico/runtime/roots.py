"""The roots Portico offers a server (``roots/list``, and roots asked for in a 2026
multi round-trip request): a project server gets its project folder as a ``file://`` root;
a global server gets none, so Portico does not declare the roots capability to it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico import paths
from portico.config.model import Scope, ServerSpec

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


def roots_for(spec: ServerSpec) -> list[types.Root]:
    import mcp_types as types

    folder = project_folder(spec)
    if folder is None:
        return []
    return [types.Root(uri=folder.as_uri(), name=folder.name or str(folder))]  # type: ignore[arg-type]


def list_roots_callback(spec: ServerSpec) -> Any:
    """The Client's ``list_roots_callback`` for ``spec``, or None when it has no roots."""
    roots = roots_for(spec)
    if not roots:
        return None

    async def list_roots(context: Any) -> types.ListRootsResult:
        import mcp_types as types

        return types.ListRootsResult(roots=roots)

    return list_roots
