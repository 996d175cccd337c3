"""The trust review shows a project server's sandbox: what it may read, write and reach,
or that it has none, with each widening among the loosenings; and, from the first review
on (before any server ran), the method this machine sandboxes with and its limits."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.cli.terminal_prompter import TerminalPrompter
from portico.config import load
from portico.policy.prompters import review_detail_lines
from portico.policy.trust import TrustGate
from portico.prompts import TrustChoice
from portico.runtime.sandbox import probe
from portico.runtime.sandbox.describe import method_note
from portico.runtime.sandbox.landlock import ABI_CAP_ENV
from tests.runtime.sandbox.targets import need_landlock


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
    assert lines[at + 1 : at + 5] == [
        "  sandboxed: the system read-only, its own install, a private /tmp, an empty home",
        f"  may read: {project}, /srv/data",
        f"  may write: {project}/out",
        "  may reach: api.example.com",
    ]
    assert lines[at + 5 :] == [f"  method: {method_note()}"], lines  # how, and why that way
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


def _landlocked(project: Path) -> None:
    (project / ".portico" / "mcp.toml").write_text(
        "[mcp.docs]\n"
        f'command = ["{sys.executable}", "server.py"]\n'
        "[mcp.docs.sandbox]\n"
        'network = { allow = ["api.example.com"] }\n'
    )


@pytest.fixture
def fresh_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """This process has not asked how it sandboxes: the review is the first to."""
    probe.forget()
    yield monkeypatch
    probe.forget()


@pytest.mark.parametrize("abi", [3, 4, 6])
async def test_the_first_review_names_landlock_and_its_limits(
    project: Path, fresh_probe: pytest.MonkeyPatch, abi: int
) -> None:
    need_landlock(abi)
    fresh_probe.setenv(probe.METHODS_ENV, "landlock")
    fresh_probe.setenv(ABI_CAP_ENV, str(abi))
    _landlocked(project)
    docs = load(project).server("docs")
    assert docs is not None
    review = await TrustGate(TerminalPrompter(io.StringIO(), io.StringIO()), ask=False).check(docs)
    assert review is not None
    lines = review_detail_lines(review.request)
    at = lines.index("sandbox:")
    assert lines[at + 1].startswith("  sandboxed with Landlock (bwrap cannot run here)"), lines
    if abi == 3:
        assert lines[at + 4] == (
            "  may reach: any host: network not filtered (Landlock ABI 3 cannot restrict TCP;"
            " you are asked first)"
        )
    else:
        assert lines[at + 4] == (
            "  may reach: api.example.com (TCP only through the proxy; no UDP, no raw sockets)"
        )
    method = f"  method: landlock (ABI {abi}) instead of bwrap (as {probe.METHODS_ENV} asks)"
    assert lines[at + 5].startswith(method), lines
    # Below ABI 6 Landlock does not scope signals: the review says what that leaves open.
    signals = lines[at + 5].endswith("; it can still signal your other processes")
    assert signals == (abi < 6), lines
    output = io.StringIO()
    await TerminalPrompter(io.StringIO("\n"), output).review_trust(review.request)
    assert "sandboxed with Landlock" in output.getvalue()


async def test_the_first_review_says_when_this_machine_cannot_sandbox(
    project: Path, fresh_probe: pytest.MonkeyPatch
) -> None:
    fresh_probe.setenv(probe.METHODS_ENV, "chroot")
    _landlocked(project)
    docs = load(project).server("docs")
    assert docs is not None
    review = await TrustGate(TerminalPrompter(io.StringIO(), io.StringIO()), ask=False).check(docs)
    assert review is not None
    lines = review_detail_lines(review.request)
    assert lines[-1] == (
        "  this machine cannot sandbox it (PORTICO_SANDBOX_METHODS='chroot' is not a list of "
        "sandbox methods (use bwrap, landlock, comma-separated)): you will be asked first"
    ), lines
