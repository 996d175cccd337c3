"""The local endpoint: Portico as one MCP server on 127.0.0.1 for other MCP clients.

It aggregates the person's connected servers (their prefixed tool names, filters and
tool search), and every call passes the process's one ToolGuard with a CallContext that
names the client, so approvals, spend and sign-ins stay with Portico. Each client has its
own bearer token (``clients.py``); ``access.py`` refuses an unknown token (401) and a
foreign ``Origin`` (403) before the MCP SDK sees the request. No Qt here: the app runs
the endpoint on its runtime thread, ``portico serve`` on the command's loop.
"""
