"""``portico mcp review`` and ``portico mcp trust`` as a person runs them."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from portico.cli.terminal_prompter import TerminalPrompter
from portico.config import load
from portico.policy.trust import TrustGate
from portico.policy.trust_store import TrustStore
from portico.prompts import TrustChoice
from tests.helpers.cli import run_cli
from tests.helpers.servers import ASKER
from tests.helpers.unsandboxed import agreed_before

pytestmark = pytest.mark.slow  # talks to real servers or processes


def write_project(project: Path) -> Path:
    toml = project / ".portico" / "mcp.toml"
    toml.write_text(
        "[mcp.docs]\n"
        f'command = ["{sys.executable}", "{ASKER}", "stdio"]\n'
        'environment = { API_KEY = "secret-value-123" }\n'
        'protocol = "legacy"\n'
        "\n"
        "[mcp.web]\n"
        'url = "http://127.0.0.1:9/mcp"\n'
    )
    return toml


def test_review_lists_pending_servers_with_reasons(portico_home: Path, project: Path) -> None:
    write_project(project)
    done = run_cli(portico_home, "mcp", "review", "--project", str(project))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"docs (waiting) from {project}/.portico/mcp.toml:1" in out
    assert "env: API_KEY" in out and "secret-value-123" not in out
    assert "runs a command on this computer" in out
    assert "web (waiting)" in out and "127.0.0.1 is a loopback address" in out
    assert "review it: portico mcp trust docs" in out


def test_trust_accept_then_review_is_clean_and_reject_disables(
    portico_home: Path, project: Path
) -> None:
    toml = write_project(project)
    accepted = run_cli(portico_home, "mcp", "trust", "docs", "--accept", "--project", str(project))
    assert accepted.returncode == 0, accepted.stderr
    assert "Trusted 'docs'" in accepted.stdout
    spec = load(project).server("docs")
    assert spec is not None and TrustStore().decision_for(spec) == "trust"
    review = run_cli(portico_home, "mcp", "review", "--project", str(project))
    assert "docs (" not in review.stdout and "web (waiting)" in review.stdout
    rejected = run_cli(portico_home, "mcp", "trust", "web", "--reject", "--project", str(project))
    assert rejected.returncode == 0, rejected.stderr
    assert "enabled" not in toml.read_text()  # the project's shared file stays as it was
    web = load(project).server("web")
    assert web is not None and TrustStore().decision_for(web) == "reject"


def test_trust_without_a_terminal_refuses_with_the_next_step(
    portico_home: Path, project: Path
) -> None:
    write_project(project)
    done = run_cli(portico_home, "mcp", "trust", "docs", "--project", str(project))
    assert done.returncode == 1
    assert "run 'portico mcp trust docs' or open it in the app" in done.stderr


def test_trust_once_connects_now_and_saves_nothing(portico_home: Path, project: Path) -> None:
    write_project(project)
    docs = load(project).server("docs")
    assert docs is not None
    agreed_before(docs)  # where this machine cannot sandbox, nobody here could agree
    done = run_cli(portico_home, "mcp", "trust", "docs", "--once", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert "Connected to 'docs' once" in done.stdout and "tools" in done.stdout
    spec = load(project).server("docs")
    assert spec is not None and TrustStore().decision_for(spec) is None


def test_trust_of_an_unknown_server_lists_the_project_servers_and_the_next_step(
    portico_home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from portico.cli.main import main

    write_project(project)
    assert main(["mcp", "trust", "nope", "--project", str(project)]) == 2
    assert capsys.readouterr().err == (
        "portico: no server named 'nope' in the config (project servers: docs, web); "
        "run 'portico mcp review' to see the ones waiting\n"
    )


def write_launch_project(project: Path) -> None:
    hook = project / "tools" / "docs" / ".portico" / "telemetry.js"  # relative to its cwd
    hook.parent.mkdir(parents=True)
    hook.write_text("// loaded by the server\n")
    (project / ".portico" / "mcp.toml").write_text(
        "[mcp.docs]\n"
        f'command = ["{sys.executable}", "{ASKER}", "stdio"]\n'
        'cwd = "tools/docs"\n'
        'environment = { NODE_OPTIONS = "--require ./.portico/telemetry.js",'
        ' API_KEY = "s3cr3t-v" }\n'
        'trust = "full"\n'
        'protocol = "legacy"\n'
    )


def assert_whole_review(out: str, project: Path) -> None:
    assert f"cwd: {project}/tools/docs" in out
    assert "env NODE_OPTIONS = --require ./.portico/telemetry.js" in out
    assert "env API_KEY = ********" in out and "s3cr3t-v" not in out
    assert "This server would:" in out
    assert "  - trust full: calls run without asking" in out
    assert "tools/docs/.portico/telemetry.js" in out.split("project files it loads")[1]


def test_review_shows_the_whole_launch_the_loosenings_and_pinned_files(
    portico_home: Path, project: Path
) -> None:
    write_launch_project(project)
    review = run_cli(portico_home, "mcp", "review", "--project", str(project))
    assert review.returncode == 0, review.stderr
    assert_whole_review(review.stdout, project)


async def test_trust_question_on_a_terminal_shows_the_same(
    portico_home: Path, project: Path
) -> None:
    """``portico mcp trust NAME`` on a terminal asks through the TerminalPrompter."""
    write_launch_project(project)
    spec = load(project).server("docs")
    assert spec is not None
    output = io.StringIO()
    prompter = TerminalPrompter(io.StringIO("\n"), output)
    review = await TrustGate(prompter, ask=False).check(spec)
    assert review is not None
    assert await prompter.review_trust(review.request) is TrustChoice.DECLINE
    assert_whole_review(output.getvalue(), project)
