"""Allow a host for a server: one entry added to ``sandbox.network.allow``.

Written with the round-trip editor into the file that declares the server (comments,
order and bytes elsewhere kept), atomically, refusing if the file changed since it was
read. For a project server that is the project file, so the wider sandbox is a loosening
its trust review names before the server runs again. File I/O: call off the GUI thread.
"""

from __future__ import annotations

from pathlib import Path

from portico.config.document import ConfigDocument
from portico.config.model import ServerSpec
from portico.config.validate import sandbox_host_problem

KEY = "sandbox.network.allow"


def allow_host(spec: ServerSpec, entry: str) -> Path:
    """Add ``entry`` (``host`` or ``host:port``) to ``spec``'s allow list in its file; the
    file written. Nothing is written when the entry is there already."""
    problem = sandbox_host_problem(entry)
    if problem:
        raise ValueError(f"{spec.source}: {spec.name}.{KEY}: {problem}")
    document = ConfigDocument.load(spec.source.path)
    current = list(document.get_field(spec.name, KEY) or ())
    if entry in current:
        return spec.source.path
    document.set_field(spec.name, KEY, [*current, entry])
    document.save()
    return spec.source.path
