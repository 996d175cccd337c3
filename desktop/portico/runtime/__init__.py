"""The MCP runtime: connections, the hub, the tool registry, tool search. No Qt here."""
