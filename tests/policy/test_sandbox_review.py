"""The trust review shows a project server's sandbox: what it may read, write and reach,
or that it has none, with each widening among the loosenings."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from portico.cli.terminal_prompter import TerminalPrompter
from portico.config import load
from portico.policy.prompters import review_detail_lines
from portico.policy.trust import TrustGate
from portico.prompts import TrustChoice


async def test_the_review_shows_what_the_sandbox_lets_it_do(project: Path) -> None:
    (project / ".portico" / "mcp.toml").write_text(
        "[mcp.docs]\n"
        f'command = ["{sys.executable}", "server.py"]\n'
        "[mcp.docs.sandbox]\n"
        'read = ["/srv/data"]\n'
        'write = ["./out"]\n'
        'network = { allow = ["api.example.com"] }\n'
        "[mcp.bare]\n"
        f'command = ["{sys.executable}", "server.py"]\n'
        "sandbox = { enabled = false }\n"
    )
    config = load(project)
    docs, bare = config.server("docs"), config.server("bare")
    assert docs is not None and bare is not None
    review = await TrustGate(TerminalPrompter(io.StringIO(), io.StringIO()), ask=False).check(docs)
    assert review is not None
    lines = review_detail_lines(review.request)
    at = lines.index("sandbox:")
    assert lines[at + 1 :] == [
        "  sandboxed: the system read-only, its own install, a private /tmp, an empty home",
        f"  may read: {project}, /srv/data",
        f"  may write: {project}/out",
        "  may reach: api.example.com",
    ]
    assert "  - may read outside its project: /srv/data (sandbox.read)" in lines
    output = io.StringIO()
    prompter = TerminalPrompter(io.StringIO("\n"), output)
    assert await prompter.review_trust(review.request) is TrustChoice.DECLINE
    assert f"may write: {project}/out" in output.getvalue()

    review = await TrustGate(TerminalPrompter(io.StringIO(), io.StringIO()), ask=False).check(bare)
    assert review is not None
    lines = review_detail_lines(review.request)
    assert "  no sandbox: it runs with all of your rights (your files, your network)" in lines
    assert any(line.startswith("  - runs outside the sandbox") for line in lines)
