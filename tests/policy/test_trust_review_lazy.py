"""A review's request (launch, pinned files, sandbox lines) is built when it is asked for,
from what the check found: what it shows is what a decision binds to, and a file changed
after the check is caught by the next one. Real project folder, loader, gate, store."""

from __future__ import annotations

from pathlib import Path

from portico.config import load
from portico.policy.prompters import NonInteractivePrompter, review_detail_lines
from portico.policy.trust import TrustGate
from portico.prompts import TrustChoice


async def test_the_request_is_built_when_asked_and_shows_what_the_decision_binds_to(
    portico_home: Path, project: Path
) -> None:
    script = project / "tools" / "serve.js"
    script.parent.mkdir(parents=True)
    script.write_text("console.log('good');\n", encoding="utf-8")
    (project / ".portico").mkdir(exist_ok=True)
    (project / ".portico" / "config.yaml").write_text(
        "mcp_servers:\n  notes:\n    command: node\n    args: [tools/serve.js]\n",
        encoding="utf-8",
    )
    spec = load(project).server("notes")
    assert spec is not None
    gate = TrustGate(NonInteractivePrompter(), ask=False)
    review = await gate.check(spec)
    assert review is not None
    assert "request" not in vars(review)  # nothing built yet
    pinned = review.bound["files"][0][1]

    script.write_text("console.log('evil');\n", encoding="utf-8")  # after the check
    shown = "\n".join(review_detail_lines(review.request))
    good = len("console.log('good');\n")
    assert f"tools/serve.js ({good} bytes, sha256 {pinned[7:19]}" in shown  # as checked
    assert "command: node" in shown and f"cwd: {review.key[0]}" in shown
    assert review.key[0].endswith(project.name)
    assert review.request is review.request  # built once

    assert (await gate.apply(review, TrustChoice.TRUST)).allowed  # binds to what was shown
    verdict = await TrustGate(NonInteractivePrompter(), ask=False)(spec)
    assert not verdict.allowed and not verdict.rejected
    assert any("changed since you trusted it: tools/serve.js" in r for r in verdict.reasons)
