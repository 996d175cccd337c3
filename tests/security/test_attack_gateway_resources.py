"""A client of the local endpoint tries to read what it was never shown: a URI no visible
server listed or templated (a file on the machine, another server's resource hidden by
its profile). Each is refused, and the backend is never asked."""

from __future__ import annotations

import pytest
from mcp import MCPError

from portico.config.model import TrustLevel
from portico.runtime.list_refresher import handshake_era
from tests.gateway.helpers import sdk_client, serving
from tests.gateway.test_forwarding import everything
from tests.helpers.person import ScriptedPerson
from tests.helpers.servers import EVERYTHING
from tests.helpers.specs import toolbox_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.npm,
    pytest.mark.usefixtures("memory_keyring"),
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers"),
]


async def test_reading_a_uri_never_shown_is_refused() -> None:
    async with serving(ScriptedPerson(), everything()) as running:
        token = await running.endpoint.book.add("attacker")
        async with sdk_client(running.url, token, mode="legacy") as client:
            listed = (await client.list_resources()).resources
            ok = await client.read_resource(str(listed[0].uri))
            for uri in (
                "file:///etc/passwd",
                "demo://resource/../../etc/passwd",
                "http://169.254.169.254/",
            ):
                with pytest.raises(MCPError, match="offered by none of your servers"):
                    await client.read_resource(uri)
            with handshake_era(), pytest.raises(MCPError, match="offered by none"):
                await client.subscribe_resource("file:///etc/shadow")
    assert ok.contents
    outcomes = [e.outcome for e in running.endpoint.gateway.activity.entries("attacker")]
    assert outcomes.count("refused: never shown") == 4


async def test_a_template_match_is_allowed_but_a_hidden_servers_resource_is_not() -> None:
    async with serving(
        ScriptedPerson(), everything(), toolbox_spec("tb", trust=TrustLevel.FULL)
    ) as running:
        book = running.endpoint.book
        token = await book.add("narrow")
        await book.set_profile("narrow", ("tb",), ())
        wide = await book.add("wide")
        async with sdk_client(running.url, wide, mode="legacy") as client:
            templates = (await client.list_resource_templates()).resource_templates
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
        template = next(str(t.uri_template) for t in templates if "{" in str(t.uri_template))
        async with sdk_client(running.url, token, mode="legacy") as client:
            mine = [str(r.uri) for r in (await client.list_resources()).resources]
            with pytest.raises(MCPError, match="offered by none of your servers"):
                await client.read_resource(next(u for u in listed if u not in mine))
    assert "{" in template
