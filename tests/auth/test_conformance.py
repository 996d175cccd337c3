"""The MCP conformance suite (client mode) against Portico's runtime + auth.

Every ``auth/*`` client scenario of @modelcontextprotocol/conformance 0.1.16 and the
RFC 9207 / issuer scenarios of conformance-next (0.2.0-alpha.12) run against
``conformance_client.py``; each must pass unless conformance_expected_failures.txt
names it with a reason (and then it must still fail, so the list stays honest).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BIN = REPO / "tests" / "peers" / "node_modules" / ".bin"
NEXT = REPO / "tests" / "peers" / "node_modules" / "conformance-next" / "dist" / "index.js"
HARNESS = HERE / "conformance_client.py"
EXPECTED = HERE / "conformance_expected_failures.txt"

SUITES: dict[str, list[str]] = {
    "0.1.16": [str(BIN / "conformance")],
    "next": [str(BIN / "node"), str(NEXT)],
}
# From conformance-next: the RFC 9207 iss scenarios and the issuer checks that go with them.
NEXT_SCENARIOS = (
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/authorization-server-migration",
)

# Extension scenarios without a person: client_credentials (secret and private_key_jwt)
# and cross-app access (ID-JAG token exchange + jwt-bearer grant).
MACHINE_SCENARIOS = (
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/cross-app-access-complete-flow",
)

pytestmark = pytest.mark.skipif(not (BIN / "node").exists(), reason="npm peers not installed")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PORTICO_HOME", None)  # the harness makes its own
    return env


def list_auth_scenarios() -> list[str]:
    out = subprocess.run(
        [*SUITES["0.1.16"], "list", "--client"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        check=True,
    ).stdout
    return sorted(set(re.findall(r"^\s*-\s*(auth/[a-z0-9-]+)", out, re.MULTILINE)))


def expected_failures() -> dict[str, str]:
    result: dict[str, str] = {}
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        suite, scenario, reason = line.split(":", 2)
        result[f"{suite}:{scenario}"] = reason.strip()
    return result


@dataclass(frozen=True)
class Outcome:
    passed: bool
    summary: str


def run_scenario(suite: str, scenario: str) -> Outcome:
    command = f"{sys.executable} {HARNESS}"
    try:
        done = subprocess.run(
            [*SUITES[suite], "client", "--command", command, "--scenario", scenario],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=150,
            cwd=str(HERE),
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, "timed out")
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    passed = done.returncode == 0 and "OVERALL: PASSED" in text
    lines = [ln for ln in text.splitlines() if "Passed:" in ln or "FAIL" in ln or " - " in ln]
    return Outcome(passed, "\n".join(lines[-12:]))


def all_cases() -> list[tuple[str, str]]:
    return [("0.1.16", s) for s in list_auth_scenarios()] + [("next", s) for s in NEXT_SCENARIOS]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    cases = all_cases()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda case: run_scenario(*case), cases))
    return {
        f"{suite}:{scenario}": result
        for (suite, scenario), result in zip(cases, results, strict=True)
    }


def test_every_auth_scenario_is_listed() -> None:
    scenarios = list_auth_scenarios()
    assert len(scenarios) >= 20
    for name in ("auth/metadata-default", "auth/pre-registration", "auth/scope-step-up"):
        assert name in scenarios
    for name in MACHINE_SCENARIOS:
        assert name in scenarios
        assert f"0.1.16:{name}" not in expected_failures()
    for key in expected_failures():
        suite, scenario = key.split(":", 1)
        assert suite in SUITES
        assert scenario in scenarios or scenario in NEXT_SCENARIOS


@pytest.mark.timeout(480)  # ~31 scenarios, ~3 s each, on a shared 2-core machine
def test_conformance_scenarios(outcomes: dict[str, Outcome]) -> None:
    expected = expected_failures()
    problems: list[str] = []
    for key, outcome in sorted(outcomes.items()):
        if key in expected:
            if outcome.passed:
                problems.append(f"{key} now passes: remove it from {EXPECTED.name}")
        elif not outcome.passed:
            problems.append(f"{key} FAILED:\n{outcome.summary}")
    passed = sum(o.passed for o in outcomes.values())
    print(f"conformance: {passed}/{len(outcomes)} scenarios passed")
    assert not problems, "\n\n".join(problems)
    assert passed == len(outcomes) - len(set(expected) & set(outcomes))
    # The machine-to-machine grants (oauth.flow client_credentials / cross_app) included.
    for scenario in MACHINE_SCENARIOS:
        assert outcomes[f"0.1.16:{scenario}"].passed, scenario
