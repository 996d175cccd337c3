"""The conformance suite's *server* scenarios that apply to a proxy, against ``portico serve``
fronting server-everything, at both protocol revisions; the count is printed.

A scenario applies when it tests how a server behaves, not the suite's own fixture
server: most server scenarios call tools, prompts and resources by the fixture's names
(``test_simple_text``, ``test://watched-resource``, ...), which a gateway fronting
server-everything names ``everything__...`` or does not have. Those are listed in
:data:`FIXTURE_SCENARIOS` and not run; the forwarding they would exercise (progress,
logging, sampling, elicitation, subscriptions, list changes) is tested against
server-everything in test_forwarding.py. Two checks of ``server-stateless`` need the
fixture's ``test_missing_capability`` tool (:data:`FIXTURE_CHECKS`). ``dns-rebinding-
protection`` sends its requests with its own HTTP client, without the client token the
endpoint requires (its "valid localhost" request gets 401, rightly); test_endpoint.py
tests Host (421) and Origin (403) refusals instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from portico.paths import paths
from tests.conformance.test_conformance import BIN, SUITE, _env
from tests.gateway.test_serve import portico, start_serve, stop
from tests.helpers.servers import EVERYTHING, NODE

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(not (BIN / "node").exists(), reason="npm peers not installed"),
]

PRELOAD = Path(__file__).parent / "peers" / "with_token.cjs"
APPLICABLE = {
    "2025-11-25": (
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "logging-set-level",
        "completion-complete",
        "tools-list",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
    ),
    "2026-07-28": (
        "server-stateless",
        "completion-complete",
        "tools-list",
        "server-sse-multiple-streams",
        "resources-list",
        "sep-2164-resource-not-found",
        "prompts-list",
        "caching",
        "input-required-result-unsupported-methods",
        "input-required-result-ignore-extra-params",
    ),
}
FIXTURE_CHECKS = {
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    home = tmp_path_factory.mktemp("home")
    old = os.environ.get("PORTICO_HOME")
    os.environ["PORTICO_HOME"] = str(home)
    try:
        folder = paths().config_dir
        folder.mkdir(parents=True, exist_ok=True)
        everything = json.dumps([str(NODE), str(EVERYTHING), "stdio"])
        (folder / "mcp.toml").write_text(
            f'[mcp.everything]\ncommand = {everything}\ntrust = "full"\n'
        )
        (folder / "config.yaml").write_text("secrets:\n  file_fallback: true\n")
        added = portico("clients", "add", "conformance")
        assert added.returncode == 0, added.stderr
        process = start_serve()
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip().removeprefix("Portico endpoint: ")
            while not process.stdout.readline().startswith("MCP: registered"):
                pass
            yield url, added.stdout.strip()
        finally:
            stop(process)
    finally:
        if old is None:
            os.environ.pop("PORTICO_HOME", None)
        else:
            os.environ["PORTICO_HOME"] = old


def run(url: str, token: str, revision: str, scenario: str) -> tuple[bool, str]:
    env = {**_env(), "GATEWAY_TOKEN": token, "NODE_OPTIONS": f"--require {PRELOAD}"}
    args = [str(BIN / "node"), str(SUITE / "dist" / "index.js"), "server", "--url", url]
    args += ["--scenario", scenario, "--spec-version", revision]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    failed = set(re.findall(r"\[([a-z0-9-]+)\s*\] FAILURE", text))
    passed = "Passed:" in text and not (failed - FIXTURE_CHECKS)
    summary = [line for line in text.splitlines() if "FAILURE" in line or "Error:" in line]
    return passed, "\n".join(summary[-8:])


@pytest.mark.timeout(600)
def test_the_proxy_scenarios_pass_at_both_revisions(endpoint: tuple[str, str]) -> None:
    url, token = endpoint
    cases = [(rev, s) for rev, names in APPLICABLE.items() for s in names]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda case: run(url, token, *case), cases))
    problems = [
        f"{rev}:{s}\n{why}" for (rev, s), (ok, why) in zip(cases, results, strict=True) if not ok
    ]
    counts = []
    for rev in APPLICABLE:
        mine = [ok for (r, _s), (ok, _w) in zip(cases, results, strict=True) if r == rev]
        counts.append(f"{rev}: {sum(mine)}/{len(mine)}")
    print(f"\ngateway conformance (server scenarios that apply to a proxy) {', '.join(counts)}")
    assert not problems, "\n\n".join(problems)
