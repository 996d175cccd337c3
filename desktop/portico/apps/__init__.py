"""MCP Apps (``io.modelcontextprotocol/ui``): tools that point at an interactive view.

A tool's ``_meta.ui`` names a ``ui://`` resource (an HTML document) and who may call the
tool: the model, the view, or both (``runtime/tool_views.py``). The resource is read once per server
session and kept (:mod:`.resource`); the page it becomes gets a Content-Security-Policy
built only from what the server declared (:mod:`.csp`). A shown view talks JSON-RPC to
the host (:mod:`.session`): every tool call it makes goes through the person's ToolGuard
as the view's own call, and only to its own server. No Qt here: a face renders the page
and carries the messages.
"""
