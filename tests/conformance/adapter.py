"""The conformance suite's client under test: Portico used the way a person uses it.

The suite runs ``python adapter.py <server url>`` with ``MCP_CONFORMANCE_SCENARIO`` (and
for some scenarios ``MCP_CONFORMANCE_CONTEXT``: pre-registered credentials, the tool calls
to make) set. The adapter

1. writes the config a person would write (``config.yaml``: the server's url, its
   ``oauth`` block with the documented ``allow_private_endpoints`` setting, because the
   suite's authorization server listens on another loopback port), secrets via the
   keyring as ``portico secret set`` stores them;
2. builds the core exactly as both faces do (``portico.services.build_services``: the
   trust gate, the network policy, sampling and elicitation policies, OAuth) with a
   scripted person (:class:`ScriptedPrompter`);
3. connects through the hub; a server parked in NeedsAuth gets ``mcp login`` (the same
   ``AuthManager.login`` the command calls) and a retry;
4. calls the tools (those the scenario names, else every tool, with schema defaults)
   through the registry, as ``portico mcp call`` does, stepping up once on a 403.

Exit 0 only when all of that worked.
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

SERVER = "conformance"
# The suite's CIMD scenario expects exactly this URL as the client id.
CIMD_URL = "https://conformance-test.local/client-metadata.json"

# Scenarios whose context describes a machine-to-machine client, and the flow a person
# would configure for them.
MACHINE_FLOW = {
    "auth/client-credentials-basic": "client_credentials",
    "auth/client-credentials-jwt": "client_credentials",
    "auth/cross-app-access-complete-flow": "cross_app",
    "auth/enterprise-managed-authorization": "cross_app",
}


class ScriptedPrompter:
    """A person who follows the browser to the end, approves what is asked, accepts
    elicitations with the form's defaults filled in and approves sampling as proposed."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def authorize(self, request: Any) -> str | None:
        self.asked.append("authorize")
        async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as http:
            await http.get(request.authorize_url)
        await asyncio.Event().wait()  # the loopback listener wins; this task is cancelled
        return None

    async def notify(self, notice: Any) -> None:
        print(f"notice: {notice.text}", file=sys.stderr)

    async def device_code(self, request: Any) -> None:
        raise NotImplementedError("no scenario signs in with a device code")

    async def review_trust(self, request: Any) -> Any:
        from portico.prompts import TrustChoice

        self.asked.append("trust")
        return TrustChoice.ONCE

    async def approve_tool(self, request: Any) -> Any:
        from portico.prompts import ApprovalAnswer, ApprovalChoice

        self.asked.append("approve")
        return ApprovalAnswer(ApprovalChoice.ONCE)

    async def approve_spend(self, request: Any) -> Any:
        from portico.prompts import ApprovalChoice

        return ApprovalChoice.ONCE

    async def elicit(self, request: Any) -> Any:
        from portico.prompts import ElicitationAnswer

        self.asked.append("elicit")
        if request.mode == "url":
            return ElicitationAnswer("accept")
        return ElicitationAnswer("accept", dict(request.defaults))

    async def review_sampling(self, request: Any) -> Any:
        from portico.prompts import SamplingAnswer

        self.asked.append("sampling")
        return SamplingAnswer("approve")

    async def run_unsandboxed(self, request: Any) -> bool:
        self.asked.append("unsandboxed")  # this person agrees to everything
        return True


async def write_config(home: Path, url: str, scenario: str, context: dict[str, Any]) -> Path:
    """The config.yaml a person would write for this scenario; secrets go to the keyring
    as ``portico secret set`` stores them."""
    from portico.auth.secret_store import SecretStore

    store = SecretStore()

    oauth: dict[str, Any] = {"timeout": 30, "allow_private_endpoints": True}
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
    server = {"url": url, "connect_timeout": 30, "timeout": 30, "oauth": oauth}
    # Portico's Client ID Metadata Document, as a person publishes it (the global setting).
    document: dict[str, Any] = {
        "oauth": {"client_metadata_url": CIMD_URL},
        "mcp_servers": {SERVER: server},
    }
    path = home / "config" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def arguments_for(tool: Any) -> dict[str, Any]:
    """What a person would type: schema defaults, else a plain value per required field."""
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None) or {}
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    required = schema.get("required", []) if isinstance(schema, dict) else []
    values: dict[str, Any] = {}
    for name, prop in properties.items():
        if isinstance(prop, dict) and "default" in prop:
            values[name] = prop["default"]
    for name in required:
        if name in values:
            continue
        kind = properties.get(name, {}).get("type")
        values[name] = {"string": "x", "number": 1, "integer": 1, "boolean": True}.get(kind, "x")
    return values


def server_answered(exc: BaseException) -> bool:
    """The server answered the call with a JSON-RPC error (its answer, not our failure)."""
    from mcp import MCPError

    from portico.runtime.errors import CONNECTION_CLOSED, REQUEST_TIMEOUT

    for candidate in (exc, exc.__cause__):
        if isinstance(candidate, MCPError) and candidate.error is not None:
            return candidate.error.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT)
    return False


async def run(url: str) -> int:
    from portico.config import load
    from portico.runtime.errors import NeedsAuth, describe
    from portico.runtime.events import Status
    from portico.runtime.hub import Hub
    from portico.services import build_services

    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    path = await write_config(Path(os.environ["PORTICO_HOME"]), url, scenario, context)
    config = load()
    spec = config.server(SERVER)
    if spec is None or config.errors:
        problems = "; ".join(str(d) for d in config.diagnostics)
        print(f"{path}: the config did not load: {problems}", file=sys.stderr)
        return 1
    person = ScriptedPrompter()
    services = build_services(person)
    services.configure(config)
    hub = Hub(hooks=services.hooks)
    try:
        await hub.apply(config)
        conn = hub.connection(SERVER)
        state = await conn.wait_settled(60)
        # `portico mcp login conformance` when told to: a first sign-in, then at most one
        # step-up for what connecting needs.
        for _ in range(2):
            if state.status is not Status.NEEDS_AUTH:
                break
            print(f"told: {state.error}", file=sys.stderr)
            await services.auth.login(spec)
            await hub.retry(SERVER)
            state = await conn.wait_settled(60)
        if state.status is not Status.RUNNING:
            print(f"not running: {state.status} {state.error}", file=sys.stderr)
            return 1
        calls = context.get("toolCalls")
        if calls is None:
            calls = [{"name": t.name, "arguments": arguments_for(t)} for t in conn.tools]
        registered = {t.tool: t.qualified for t in hub.registry.server_tools(SERVER)}
        failed = 0
        for call in calls:
            name = call["name"]
            if name not in registered:
                print(f"tool {name!r} is not offered (or was refused)", file=sys.stderr)
                continue
            arguments = call.get("arguments") or {}
            try:
                result = await hub.registry.call(registered[name], arguments)
            except NeedsAuth as exc:  # a step-up the CLI reports; `mcp login` asks the union
                print(f"told: {exc}", file=sys.stderr)
                await services.auth.login(spec)
                await hub.retry(SERVER)
                await conn.wait_settled(60)
                try:
                    result = await hub.registry.call(registered[name], arguments)
                except Exception as exc:
                    again = describe(exc)
                    print(f"calling {name} after signing in again: {again}", file=sys.stderr)
                    failed += 1
                    continue
            except Exception as exc:
                print(f"calling {name}: {describe(exc)}", file=sys.stderr)
                failed += 0 if server_answered(exc) else 1
                continue
            print(f"called {name}: error={result.is_error}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        await hub.close()


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: adapter.py SERVER_URL", file=sys.stderr)
        return 2
    home = tempfile.mkdtemp(prefix="portico-conformance-")
    os.environ["PORTICO_HOME"] = home
    os.environ["BROWSER"] = "true"  # webbrowser runs `true URL`: never a real browser tab
    keyring.set_keyring(MemoryKeyring())
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    return asyncio.run(run(sys.argv[1]))


if __name__ == "__main__":
    raise SystemExit(main())
