"""``portico mcp review`` and ``portico mcp trust`` as a person runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from portico.config import load
from portico.policy.trust_store import TrustStore

from .conftest import ASKER


def portico(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PORTICO_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "portico.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        check=False,
    )


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
    done = portico(portico_home, "mcp", "review", "--project", str(project))
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
    accepted = portico(portico_home, "mcp", "trust", "docs", "--accept", "--project", str(project))
    assert accepted.returncode == 0, accepted.stderr
    assert "Trusted 'docs'" in accepted.stdout
    spec = load(project).server("docs")
    assert spec is not None and TrustStore().decision_for(spec) == "trust"
    review = portico(portico_home, "mcp", "review", "--project", str(project))
    assert "docs (" not in review.stdout and "web (waiting)" in review.stdout
    rejected = portico(portico_home, "mcp", "trust", "web", "--reject", "--project", str(project))
    assert rejected.returncode == 0, rejected.stderr
    assert "enabled" not in toml.read_text()  # the project's shared file stays as it was
    web = load(project).server("web")
    assert web is not None and TrustStore().decision_for(web) == "reject"


def test_trust_without_a_terminal_refuses_with_the_next_step(
    portico_home: Path, project: Path
) -> None:
    write_project(project)
    done = portico(portico_home, "mcp", "trust", "docs", "--project", str(project))
    assert done.returncode == 1
    assert "run 'portico mcp trust docs' or open it in the app" in done.stderr


def test_trust_once_connects_now_and_saves_nothing(portico_home: Path, project: Path) -> None:
    write_project(project)
    done = portico(portico_home, "mcp", "trust", "docs", "--once", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert "Connected to 'docs' once" in done.stdout and "tools" in done.stdout
    spec = load(project).server("docs")
    assert spec is not None and TrustStore().decision_for(spec) is None
