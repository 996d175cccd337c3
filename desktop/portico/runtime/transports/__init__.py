"""How a connection reaches its server: stdio processes, Streamable HTTP, legacy SSE.

- :mod:`.stdio`: our stdio transport (spawn, stderr to the server log, exit code).
- :mod:`.http`: the httpx2 client (headers, identity header, mTLS, proxies, size caps).
- :mod:`.proxies`: proxy selection and ``NO_PROXY`` matching.
- :mod:`.resolve`: ``${env:}`` / ``${keyring:}`` references in env and header values.
"""
