"""A tiny stdio MCP server using only the standard library (starts in ~30 ms).

Used by the fleet tests and benchmarks, where 20-30 servers importing the SDK would
take ~1.4 s of CPU each. Speaks the handshake era (``initialize``); answers the
``server/discover`` probe with "method not found" so clients fall back.

    python tiny.py [--tools N] [--name NAME] [--exit CODE]

Tools: ``echo`` (returns its ``text`` argument) and ``tool_1``..``tool_N``.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=2)
    parser.add_argument("--name", default="tiny")
    parser.add_argument("--exit", type=int, default=None, help="exit at once with CODE")
    opts = parser.parse_args()
    if opts.exit is not None:
        print(f"{opts.name}: exiting with {opts.exit} as asked", file=sys.stderr)
        return opts.exit
    tools = [
        {
            "name": "echo",
            "description": "Echo the text back.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
    ] + [
        {
            "name": f"tool_{i}",
            "description": f"Tool number {i} of {opts.name}.",
            "inputSchema": {"type": "object", "properties": {}},
        }
        for i in range(1, opts.tools + 1)
    ]
    out = sys.stdout
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg:
            continue  # a notification
        method = msg.get("method")
        params = msg.get("params") or {}
        if method == "initialize":
            result: object = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": opts.name, "version": "1.0"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            args = params.get("arguments") or {}
            text = str(args.get("text", "")) if params.get("name") == "echo" else params.get("name")
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"},
            }
            out.write(json.dumps(reply) + "\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
