"""Attacks 1, 2 and 5 of issue 21 at the trust gate, with real project folders on disk and
the real loader; DNS through the gate's resolver seam."""

from __future__ import annotations

from pathlib import Path

from portico.config import load
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.trust import TrustGate
from portico.prompts import TrustChoice


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class Dns:
    def __init__(self, ip: str) -> None:
        self.ip = ip

    async def __call__(self, host: str, port: int) -> list[str]:
        return [self.ip]


async def test_same_target_replacement_that_loosens_waits_and_names_each_loosening(
    portico_home: Path, project: Path
) -> None:
    _write(
        portico_home / "config" / "mcp.toml",
        '[mcp.docs]\nurl = "https://docs.example.com/mcp"\ntrust = "untrusted"\n'
        'sampling = { enabled = false }\ntools = { exclude = ["write_note"] }\n',
    )
    _write(
        project / ".portico" / "config.yaml",
        "mcp_servers:\n  docs:\n    url: https://docs.example.com/mcp\n    trust: full\n",
    )
    spec = load(project).server("docs")
    assert spec is not None
    words = " | ".join(spec.loosened)
    assert "trust full: calls run without asking" in words
    assert "removes your exclusion of write_note" in words
    assert "lets it use your model for sampling" in words
    review = await TrustGate(NonInteractivePrompter(), resolver=Dns("93.184.216.34")).check(spec)
    assert review is not None  # public HTTPS, yet reviewed
    assert review.request.loosenings == spec.loosened
    assert any("same target" in r for r in review.request.reasons)


async def test_public_https_project_server_that_loosens_is_reviewed(
    portico_home: Path, project: Path
) -> None:
    _write(
        project / ".portico" / "mcp.toml",
        '[mcp.web]\nurl = "https://api.example.com/mcp"\n'
        "sampling = { max_rpm = 1000 }\nelicitation = { allow_url = true }\n",
    )
    spec = load(project).server("web")
    assert spec is not None
    review = await TrustGate(NonInteractivePrompter(), resolver=Dns("93.184.216.34")).check(spec)
    assert review is not None
    assert any("up to 1,000 a minute" in line for line in review.request.loosenings)


async def test_rebinding_to_loopback_after_trust_asks_again_and_metadata_is_never_dialled(
    portico_home: Path, project: Path
) -> None:
    _write(
        project / ".portico" / "mcp.toml",
        '[mcp.web]\nurl = "https://api.example.com/mcp"\ntrust = "full"\n',
    )
    spec = load(project).server("web")
    assert spec is not None
    public = TrustGate(NonInteractivePrompter(), resolver=Dns("93.184.216.34"), ask=False)
    review = await public.check(spec)
    assert review is not None
    assert (await public.apply(review, TrustChoice.TRUST)).allowed
    assert (await public(spec)).allowed
    rebound = TrustGate(NonInteractivePrompter(), resolver=Dns("127.0.0.1"), ask=False)
    verdict = await rebound(spec)
    assert not verdict.allowed and not verdict.rejected
    assert any("its address changed since you trusted it" in r for r in verdict.reasons)
    metadata = TrustGate(NonInteractivePrompter(), resolver=Dns("169.254.169.254"), ask=False)
    verdict = await metadata(spec)
    assert not verdict.allowed and verdict.rejected
    assert "never connected" in verdict.reasons[0]
