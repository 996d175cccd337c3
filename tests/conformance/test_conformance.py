"""The MCP conformance suite's client scenarios against Portico (``adapter.py``).

Every scored client scenario of both requirement files of conformance 0.2.0-alpha.12
(``requirements/2026-07-28.yaml`` and ``requirements/2025-11-25.yaml``) runs at its own
revision's wire version, plus the extension scenarios Portico supports. Each must pass
unless ``expected_failures.txt`` names it with an upstream reference (only for a bug of
the suite; an entry that starts passing fails the test, so the list stays honest).

Scenarios run concurrently (a few at a time: each is a Node scenario server plus a Python
client). ``pytest -m conformance`` runs only this; the fast subset leaves it out.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.forkserver import fork_server

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BIN = REPO / "tests" / "peers" / "node_modules" / ".bin"
SUITE = REPO / "tests" / "peers" / "node_modules" / "conformance-next"
ADAPTER = HERE / "adapter.py"
EXPECTED = HERE / "expected_failures.txt"
REVISIONS = ("2026-07-28", "2025-11-25")
# Extension scenarios Portico implements: client_credentials (secret, private_key_jwt) and
# enterprise-managed authorization (ID-JAG token exchange + jwt-bearer grant). DPoP and
# workload identity federation are not implemented. The tasks extension has no client
# scenario in this suite (its ten tasks-* scenarios test servers): Portico's tasks client
# is tested against tests/servers/tasking.py, which test_tasks_peer.py runs the suite's
# server scenarios against (7 of the 10 apply).
EXTENSIONS = (
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
)
WORKERS = int(os.environ.get("PORTICO_CONFORMANCE_WORKERS", "4"))

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.skipif(not (BIN / "node").exists(), reason="npm peers not installed"),
]


def client_scenarios(revision: str) -> list[str]:
    """The scored client scenarios of a requirements file (its top-level ``client:`` list)."""
    text = (SUITE / "requirements" / f"{revision}.yaml").read_text(encoding="utf-8")
    block = text.split("\nclient:\n", 1)[1]
    names: list[str] = []
    for line in block.splitlines():
        match = re.match(r"^  - ([a-z0-9_/.-]+)\s*$", line)
        if match:
            names.append(match.group(1))
        elif line and not line.startswith(" "):
            break  # the next top-level key (not_scored)
    return names


def expected_failures() -> dict[str, str]:
    result: dict[str, str] = {}
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, reason = line.split(": ", 1)
        result[key.strip()] = reason.strip()
    return result


@dataclass(frozen=True)
class Outcome:
    passed: bool
    summary: str
    seconds: float


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PORTICO_HOME", None)  # the adapter makes its own
    return env


# What the adapter imports: each scenario's client is a child forked from one interpreter
# that imported them (a second of CPU saved per scenario; tests/helpers/forkserver.py).
PRELOAD = (
    "mcp",
    "httpx2",
    "keyring",
    "portico.auth.secret_store",
    "portico.config",
    "portico.runtime.errors",
    "portico.runtime.events",
    "portico.runtime.hub",
    "portico.services",
    "tests.helpers.keyrings",
)


def run_scenario(
    revision: str, scenario: str, python: tuple[str, ...] = (sys.executable,)
) -> Outcome:
    command = " ".join([*python, str(ADAPTER)])
    started = time.monotonic()
    args = [str(BIN / "node"), str(SUITE / "dist" / "index.js"), "client"]
    args += ["--command", command, "--scenario", scenario, "--timeout", "90000"]
    if revision != "extension":
        args += ["--spec-version", revision]
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, env=_env(), timeout=180, cwd=str(HERE)
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, "timed out", time.monotonic() - started)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    passed = done.returncode == 0 and "OVERALL: PASSED" in text
    lines = [ln for ln in text.splitlines() if "Passed:" in ln or "FAIL" in ln or "WARN" in ln]
    return Outcome(passed, "\n".join(lines[-12:]), time.monotonic() - started)


def all_cases() -> list[tuple[str, str]]:
    cases = [(rev, s) for rev in REVISIONS for s in client_scenarios(rev)]
    return cases + [("extension", s) for s in EXTENSIONS]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    cases = all_cases()
    with (
        fork_server(tmp_path_factory.mktemp("fork"), *PRELOAD) as python,
        ThreadPoolExecutor(max_workers=WORKERS) as pool,
    ):
        results = list(pool.map(lambda case: run_scenario(*case, tuple(python)), cases))
    return {f"{rev}:{s}": result for (rev, s), result in zip(cases, results, strict=True)}


def test_the_requirement_files_list_what_we_run() -> None:
    assert len(client_scenarios("2026-07-28")) == 32
    assert len(client_scenarios("2025-11-25")) == 18
    assert "sep-2322-client-request-state" in client_scenarios("2026-07-28")
    assert "elicitation-sep1034-client-defaults" in client_scenarios("2025-11-25")
    for key in expected_failures():
        revision, scenario = key.split(":", 1)
        assert (revision, scenario) in all_cases(), key


@pytest.mark.timeout(900)
def test_conformance_scenarios(outcomes: dict[str, Outcome]) -> None:
    expected = expected_failures()
    problems: list[str] = []
    for key, outcome in sorted(outcomes.items()):
        if key in expected:
            if outcome.passed:
                problems.append(f"{key} now passes: remove it from {EXPECTED.name}")
        elif not outcome.passed:
            problems.append(f"{key} FAILED:\n{outcome.summary}")
    counts = []
    for group in (*REVISIONS, "extension"):
        mine = [o for k, o in outcomes.items() if k.startswith(f"{group}:")]
        label = "extensions" if group == "extension" else group
        counts.append(f"{label}: {sum(o.passed for o in mine)}/{len(mine)}")
    slowest = max(outcomes.items(), key=lambda item: item[1].seconds)
    print(f"\nconformance {', '.join(counts)}")
    print(f"slowest scenario: {slowest[0]} {slowest[1].seconds:.1f} s")
    assert not problems, "\n\n".join(problems)
