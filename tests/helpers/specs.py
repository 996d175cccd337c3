"""ServerSpecs and Configs as the config loader would build them, for tests of every layer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from portico.config.model import (
    Config,
    Dialect,
    Protocol,
    RuntimeSettings,
    Scope,
    ServerSpec,
    Source,
    Transport,
)
from tests.helpers.servers import ASKER, TASKING, TOOLBOX


def make_spec(
    name: str = "toolbox", transport: str | Transport = "stdio", **fields: Any
) -> ServerSpec:
    """A ServerSpec as the config loader would build it (times in seconds)."""
    source = Source(path=Path("/tests/mcp.toml"), line=1, scope=Scope.GLOBAL, dialect=Dialect.TOML)
    for key in ("args", "env", "headers"):
        if key in fields and isinstance(fields[key], dict):
            fields[key] = tuple(fields[key].items())
        elif key in fields and isinstance(fields[key], list):
            fields[key] = tuple(fields[key])
    return ServerSpec(name=name, source=source, transport=Transport(transport), **fields)


def toolbox_spec(name: str = "toolbox", *extra: str, **fields: Any) -> ServerSpec:
    """The toolbox over stdio (extra = command-line flags)."""
    fields.setdefault("connect_timeout", 30.0)
    return make_spec(
        name,
        "stdio",
        command=sys.executable,
        args=(str(TOOLBOX), "stdio", *extra),
        **fields,
    )


def failing_spec(name: str = "failing", code: int = 4, **fields: Any) -> ServerSpec:
    """A stdio server that writes two stderr lines and exits at once (cheap: no SDK import)."""
    script = (
        f"import sys; sys.stderr.write('about to fail\\nfailing at start\\n'); sys.exit({code})"
    )
    return make_spec(name, "stdio", command=sys.executable, args=("-c", script), **fields)


def spec_for(
    name: str,
    *,
    scope: Scope = Scope.GLOBAL,
    project: Path | None = None,
    transport: Transport = Transport.STDIO,
    line: int = 1,
    **fields: Any,
) -> ServerSpec:
    if project is not None:
        path = project / ".portico" / "mcp.toml"
    else:
        path = Path("/global/config/mcp.toml")
    for key in ("env", "headers"):
        if isinstance(fields.get(key), dict):
            fields[key] = tuple(fields[key].items())
    if "args" in fields:
        fields["args"] = tuple(fields["args"])
    source = Source(path=path, line=line, scope=scope, dialect=Dialect.TOML)
    return ServerSpec(name=name, source=source, transport=transport, **fields)


def asker_spec(name: str = "asker", *extra: str, **fields: Any) -> ServerSpec:
    fields.setdefault("connect_timeout", 30.0)
    fields.setdefault("protocol", Protocol.LEGACY)
    return spec_for(name, command=sys.executable, args=(str(ASKER), "stdio", *extra), **fields)


def tasking_spec(
    *extra: str, name: str = "tasking", url: str | None = None, **fields: Any
) -> ServerSpec:
    """tests/servers/tasking.py: over stdio, or at ``url`` (see ``start_tasking``)."""
    fields.setdefault("connect_timeout", 30.0)
    if url is not None:
        return make_spec(name, "http", url=url, **fields)
    return make_spec(
        name, "stdio", command=sys.executable, args=(str(TASKING), "stdio", *extra), **fields
    )


def config_of(*specs: ServerSpec, **settings: Any) -> Config:
    return Config(servers=tuple(specs), settings=RuntimeSettings(**settings))
