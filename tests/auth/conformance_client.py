"""The MCP conformance suite's client under test: Portico's runtime + auth.

The suite runs ``python conformance_client.py <server url>`` with
``MCP_CONFORMANCE_SCENARIO`` (and, for some scenarios, ``MCP_CONFORMANCE_CONTEXT``: JSON
with a pre-registered ``client_id`` / ``client_secret``) set. This harness builds the
ServerSpec a person would write, hands it to ``portico.runtime.connection.Connection``
with ``AuthManager.auth_for`` as its auth hook (sign-ins allowed, as when a person is at
the app) and a Prompter whose "browser" follows the authorize URL to the loopback
listener, then lists and calls the server's tools. Exit 0 only when all of that worked.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2
import keyring

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo, for tests.*
from tests.helpers.keyrings import MemoryKeyring

# Conformance's CIMD scenario expects exactly this URL as the client id.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


class FollowingPrompter:
    """Plays a person whose browser follows the authorize URL to the end."""

    async def authorize(self, request: Any) -> str | None:
        async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as http:
            await http.get(request.authorize_url)
        await asyncio.Event().wait()  # the listener wins; this task is then cancelled
        return None

    async def notify(self, notice: Any) -> None:
        print(f"notice: {notice.text}", file=sys.stderr)

    async def device_code(self, request: Any) -> None:
        raise NotImplementedError

    async def review_trust(self, request: Any) -> Any:
        raise NotImplementedError

    async def approve_tool(self, request: Any) -> Any:
        raise NotImplementedError

    async def approve_spend(self, request: Any) -> Any:
        raise NotImplementedError

    async def elicit(self, request: Any) -> Any:
        raise NotImplementedError

    async def review_sampling(self, request: Any) -> Any:
        raise NotImplementedError


# Scenarios whose context describes a machine-to-machine client, and the flow a person
# would configure for them.
MACHINE_FLOW = {
    "auth/client-credentials-basic": "client_credentials",
    "auth/client-credentials-jwt": "client_credentials",
    "auth/cross-app-access-complete-flow": "cross_app",
}


async def write_config(home: Path, url: str, scenario: str, context: dict[str, Any]) -> Path:
    """The config.yaml a person would write for this scenario; secrets go to the keyring
    (``portico secret set``) and the private key to a file, as they would."""
    from portico.auth.secret_store import SecretStore

    store = SecretStore()  # the keyring this process shares with run()
    oauth: dict[str, Any] = {"timeout": 30}
    if context.get("client_id"):
        oauth["client_id"] = context["client_id"]
    if context.get("client_secret"):
        await store.store_secret("conformance-client-secret", context["client_secret"])
        oauth["client_secret"] = "${keyring:conformance-client-secret}"
    flow = MACHINE_FLOW.get(scenario)
    if flow:
        oauth["flow"] = flow
    if context.get("private_key_pem"):
        key = home / "client-key.pem"
        key.write_text(context["private_key_pem"], encoding="utf-8")
        key.chmod(0o600)
        oauth["client_assertion_key"] = str(key)
    if flow == "cross_app":
        await store.store_secret("conformance-id-token", context["idp_id_token"])
        oauth["id_token"] = "${keyring:conformance-id-token}"
        oauth["idp_token_endpoint"] = context["idp_token_endpoint"]
        oauth["idp_client_id"] = context["idp_client_id"]
    server = {"url": url, "connect_timeout": 30, "oauth": oauth}
    path = home / "config" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcp_servers": {"conformance": server}}), encoding="utf-8")
    return path


async def run(url: str) -> int:
    from portico.auth.machine import is_machine_flow
    from portico.auth.manager import AuthManager
    from portico.config import load
    from portico.runtime.connection import Connection
    from portico.runtime.events import EventBus, Status
    from portico.runtime.hooks import ConnectionHooks

    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    path = await write_config(Path(os.environ["PORTICO_HOME"]), url, scenario, context)
    config = load()
    spec = config.server("conformance")
    if spec is None or config.errors:
        problems = "; ".join(str(d) for d in config.diagnostics)
        print(f"{path}: the config did not load: {problems}", file=sys.stderr)
        return 1
    # The suite's authorization servers are plain-http loopback servers on other ports than
    # the MCP server: the network policy would (rightly) refuse them, so it is off here.
    manager = AuthManager(
        FollowingPrompter(),  # type: ignore[arg-type]
        client_metadata_url=CIMD_URL,
        endpoint_policy=None,
    )

    async def auth_for(spec: Any, *, interactive: bool = False) -> httpx2.Auth | None:
        # Machine flows never ask anybody: they run as background connects do.
        return await manager.auth_for(spec, interactive=not is_machine_flow(spec))

    hooks = ConnectionHooks(auth_for=auth_for, lookup_secret=manager.store.lookup_secret)
    connection = Connection(spec, bus=EventBus(), hooks=hooks)
    await connection.start()
    try:
        state = await connection.wait_settled(45)
        if state.status is not Status.RUNNING:
            print(f"not running: {state.status} {state.error}", file=sys.stderr)
            return 1
        for tool in connection.tools:
            arguments = _arguments_for(tool)
            result = await connection.call_tool(tool.name, arguments)
            print(f"called {tool.name}: error={getattr(result, 'isError', None)}", file=sys.stderr)
        return 0
    finally:
        await connection.stop()


def _arguments_for(tool: Any) -> dict[str, Any]:
    schema = getattr(tool, "inputSchema", None) or getattr(tool, "input_schema", None) or {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    required = schema.get("required", []) if isinstance(schema, dict) else []
    values: dict[str, Any] = {}
    for name in required:
        kind = properties.get(name, {}).get("type")
        values[name] = {"string": "x", "number": 1, "integer": 1, "boolean": True}.get(kind, "x")
    return values


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    home = tempfile.mkdtemp(prefix="portico-conformance-")
    os.environ["PORTICO_HOME"] = home
    os.environ["BROWSER"] = "true"  # webbrowser runs `true URL`: never a real browser tab
    keyring.set_keyring(MemoryKeyring())
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    return asyncio.run(run(sys.argv[1]))


if __name__ == "__main__":
    raise SystemExit(main())
