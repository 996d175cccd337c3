"""What the first-run flows write, through the round-trip ConfigDocument (no Qt here, so
the flows' effects are testable on their own and every call can run in a worker thread).

- ``found_imports``: the other clients' config files that exist, with their server counts.
- ``add_servers``: servers (neutral fields) into the global config file.
- ``add_provider``: a model provider (and the default model) into the global config file;
  its key goes to the secret store and the file gets only a ``${keyring:NAME}`` reference.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portico.config import models_edit
from portico.config.document import ConfigDocument
from portico.config.importers import KINDS, ImportSourceError, import_servers, label
from portico.config.importers.locations import Machine
from portico.config.model import Scope
from portico.config.targets import choose_file


@dataclass(frozen=True)
class FoundImport:
    kind: str
    label: str  # "Claude Desktop"
    path: Path
    count: int  # servers that would be imported
    problem: str = ""  # the file exists but cannot be read (shown instead of a count)

    @property
    def line(self) -> str:
        if self.problem:
            return f"{self.label}: {self.problem}"
        noun = "server" if self.count == 1 else "servers"
        return f"{self.label} — {self.count} {noun}"


def found_imports(project: Path | None = None, machine: Machine | None = None) -> list[FoundImport]:
    """Every client config file that exists on this machine (blocking: run in a thread)."""
    from portico.config.importers import default_locations

    machine = machine or Machine.current()
    found: list[FoundImport] = []
    for kind in KINDS:
        seen: set[Path] = set()
        for path in default_locations(kind, project=project, machine=machine):
            if not path.is_file() or path in seen:
                continue
            seen.add(path)
            try:
                result = import_servers(kind, path, project=project, machine=machine)
            except (ImportSourceError, OSError, ValueError) as exc:
                found.append(FoundImport(kind, label(kind), path, 0, str(exc)))
                continue
            if result.servers:
                found.append(FoundImport(kind, label(kind), path, len(result.servers)))
    return found


def target_file(project: Path | None = None) -> Path:
    """Where the first-run flows write: the global file the person's servers live in."""
    return choose_file(Scope.GLOBAL, project)


def add_servers(
    servers: Sequence[tuple[str, dict[str, Any]]], *, path: Path | None = None
) -> tuple[Path, list[str]]:
    """Add ``servers`` to ``path`` (default: the global file). A name that is taken gets
    a ``-2`` suffix (so an import never overwrites). Returns (file, names written)."""
    path = path or target_file()
    doc = ConfigDocument.open(path)
    written = []
    for name, fields in servers:
        final = name
        n = 2
        while doc.has_server(final):
            final = f"{name}-{n}"
            n += 1
        doc.add_server(final, fields)
        written.append(final)
    doc.save()
    return path, written


def secret_name(provider: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"{provider}_api_key").upper()


def provider_name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", text.strip().lower()).strip("-_")
    return name or "model"


def add_provider(
    name: str,
    *,
    kind: str,
    base_url: str | None,
    key_ref: str | None,
    models: Sequence[str],
    default_model: str | None,
    vision: bool = False,
    path: Path | None = None,
    make_default: bool = True,
) -> Path:
    """Write ``models.providers.NAME`` (and ``models.default``) to the global file."""
    path = path or target_file()
    doc = ConfigDocument.open(path)
    fields: dict[str, Any] = {"kind": kind}
    if base_url:
        fields["base_url"] = base_url
    if key_ref:
        fields["api_key"] = key_ref
    if models:
        fields["models"] = list(models)
    if default_model:
        fields["default_model"] = default_model
    if vision:
        fields["vision"] = True
    models_edit.put_provider(doc, name, fields)
    if make_default:
        models_edit.set_default_model(doc, f"{name}/{default_model}" if default_model else name)
    doc.save()
    return path
