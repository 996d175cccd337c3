"""MCP tool definitions for registry-level tests (no server needed)."""

from __future__ import annotations

import mcp.types as t

from portico.config.model import ServerSpec
from tests.helpers.specs import make_spec


def stdio_spec(name: str, **fields: object) -> ServerSpec:
    """A stdio server that is never started (the registry only needs its spec)."""
    return make_spec(name, "stdio", command="true", **fields)


HIDDEN = "".join(chr(0xE0000 + ord(c)) for c in "exfiltrate")


def tool(name: str, desc: str = "", **props: str) -> t.Tool:
    return t.Tool(
        name=name,
        description=desc,
        input_schema={"type": "object", "properties": {k: {"type": v} for k, v in props.items()}},
    )


TOOLS = [
    tool("read_file", f"Read a file{HIDDEN}", path="string"),
    tool("write_file", "Write a file", path="string", content="string"),
    tool("list.dir", "List a directory", path="string"),
]
