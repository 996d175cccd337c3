"""What a portico://add confirmation lists: every reference the config resolves (keyring,
env, bare ${VAR}) with where it goes, each value as written, the origin; and a linked
server passes the trust gate like a project server's (never a metadata address)."""

from __future__ import annotations

from urllib.parse import quote

from portico.config import load
from portico.config.deeplink import parse_add_link, prepare
from portico.policy.link_review import review_link
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.trust import TrustGate


def _link(**params: str | list[str]) -> str:
    parts = []
    for key, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            parts.append(f"{key}={quote(item, safe='')}")
    return "portico://add?" + "&".join(parts)


def test_every_kind_of_reference_is_listed_with_where_it_goes() -> None:
    link = _link(
        name="docs",
        url="https://mcp.example.co.uk/mcp?team=${env:TEAM}",
        transport="sse",
        header=["Authorization: Bearer ${keyring:GITHUB_PAT}", "X-User: ${USER}", "X-Lit: $${x}"],
    )
    review = review_link(prepare(parse_add_link(link)))
    assert review.secrets == (
        "the URL \u2190 your environment variable TEAM",
        "header Authorization \u2190 keyring secret GITHUB_PAT",
        "header X-User \u2190 your environment variable USER",
    )
    assert review.values == (
        "header Authorization = Bearer ${keyring:GITHUB_PAT}",
        "header X-User = ${USER}",
        "header X-Lit = $${x}",
    )
    assert review.target[:2] == (
        "It sends server-sent events to https://mcp.example.co.uk",
        "Site: example.co.uk",
    )
    lines = review.lines()
    assert lines[-1].startswith("It is added switched on but waits for your trust review")


def test_a_command_link_lists_its_command_and_every_env_value() -> None:
    link = _link(name="n", command="node server.js", env=["A=plain", "B=${keyring:TOKEN}"])
    review = review_link(prepare(parse_add_link(link)))
    assert review.target == ("It runs on this computer: node server.js",)
    assert review.values == ("env A = plain", "env B = ${keyring:TOKEN}")
    assert review.secrets == ("env B \u2190 keyring secret TOKEN",)
    assert review.url is None


async def test_a_linked_server_never_dials_a_metadata_address() -> None:
    prepare(parse_add_link(_link(name="meta", url="https://metadata.example/mcp"))).write()
    spec = load(None).server("meta")
    assert spec is not None and spec.from_link

    async def metadata(host: str, port: int) -> list[str]:
        return ["169.254.169.254"]

    gate = TrustGate(NonInteractivePrompter(), resolver=metadata, ask=False)
    verdict = await gate(spec)
    assert not verdict.allowed and verdict.rejected
    assert any("169.254.169.254" in r for r in verdict.reasons)
