"""A project can only tighten (issue 21), on a 400-server config: config load + merge + the
trust review of every server, against the same 400 servers all global (no project rules).

The project side: 200 global servers (100 stdio, 100 HTTPS, in ``mcp.toml``) and a project
``.portico/config.yaml`` with 200 servers of its own (stdio ones running a project script,
pinned by content; HTTPS ones with ``trust: full`` and sampling, loosenings to review) plus
50 same-target replacements of global servers that loosen them (``trust: full``).
The baseline: the same 400 distinct servers, the project's 200 in a global ``config.yaml``.

What the two sides compare, and what is not the same:
- Both end with the same 400 servers (names, targets, values). The project side also reads
  the 50 global definitions its replacements are held against (450 definitions for 400
  servers): the stricter-of rule needs the person's value, so that is project-rule work.
- Reviews: each side, for every one of its 400 servers, the trust gate's check and the
  review's text (``TrustGate.check`` -> ``TrustRequest`` -> ``review_detail_lines``), with an
  in-process resolver (tests/helpers/dns.py); both sides check their global servers too
  (the hub's gate passes those at once), so that work is the same on both. What differs is
  what the rules require: the 150 loosened project servers are reviewed (the baseline's
  HTTPS servers connect), and each project stdio server's launch files are pinned.
- Reopen: the project's servers trusted at an earlier run, the gate as the hub's
  connections ask it when a config is applied (``TrustGate.__call__`` for every server:
  the stored decision, the pins and DNS classes it binds to), against the baseline's gate,
  which lets its global servers through at once. Printed, with the load, as its own ratio.

Each side, in process and back to back; the ratios are the medians of the pairs' ratios
(a drift of the machine's speed hits both sides). CPU time is printed too (the machine is
shared: wall time waits for other processes).

Run: ``python -m pytest tests/benchmarks/bench_trust_400.py -s``, or from the repository
root ``python -m tests.benchmarks.bench_trust_400``.
Goal (printed, not asserted): load + reviews <= 1.1x the baseline.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from portico.config import load
from portico.config.model import Config, ServerSpec
from portico.policy.prompters import NonInteractivePrompter, review_detail_lines
from portico.policy.trust import TrustGate, is_reviewed
from portico.prompts import TrustChoice
from tests.helpers.dns import Dns

RUNS = int(os.environ.get("PORTICO_BENCH_RUNS", "7"))
GLOBAL_STDIO = 100
GLOBAL_HTTP = 100
PROJECT_STDIO = 100
PROJECT_HTTP = 100
REPLACED = 50  # project servers with a global server's name and target, loosened


def _dns() -> Dns:
    hosts = {f"g{i}.example.com" for i in range(GLOBAL_HTTP)}
    hosts |= {f"p{i}.example.com" for i in range(PROJECT_HTTP)}
    return Dns({host: ["93.184.216.34"] for host in hosts})


def _global_toml() -> str:
    out = ["# my servers\n"]
    for i in range(GLOBAL_STDIO):
        out.append(
            f'\n[mcp.gs{i}]\ncommand = ["npx", "-y", "pkg-{i}"]\n'
            f'env = {{ LEVEL = "info", KEY = "${{keyring:KEY_{i}}}" }}\ntimeout = 30000\n'
        )
    for i in range(GLOBAL_HTTP):
        out.append(
            f'\n[mcp.gh{i}]\nurl = "https://g{i}.example.com/mcp"\ntrust = "untrusted"\n'
            f"sampling = {{ enabled = false }}\n"
        )
    return "".join(out)


def _project_yaml(replacements: bool) -> str:
    out = ["mcp_servers:\n"]
    for i in range(PROJECT_STDIO):
        out.append(
            f"  ps{i}:\n    command: node\n    args: [tools/server{i % 10}.js, --port, '{i}']\n"
            f"    env:\n      NODE_OPTIONS: --require ./tools/hook.js\n      MODE: dev\n"
        )
    for i in range(PROJECT_HTTP):
        out.append(
            f"  ph{i}:\n    url: https://p{i}.example.com/mcp\n    trust: full\n"
            f"    sampling:\n      max_rpm: 1000\n"
        )
    if replacements:
        for i in range(REPLACED):
            out.append(f"  gh{i}:\n    url: https://g{i}.example.com/mcp\n    trust: full\n")
    return "".join(out)


def make_configs(root: Path) -> tuple[Path, Path, Path, Path]:
    """(project home, project folder, baseline home, an empty folder) under ``root``."""
    project_home, baseline_home = root / "project-home", root / "baseline-home"
    project, empty = root / "repo", root / "empty"
    for home in (project_home, baseline_home):
        (home / "config").mkdir(parents=True)
        (home / "config" / "mcp.toml").write_text(_global_toml(), encoding="utf-8")
    (baseline_home / "config" / "config.yaml").write_text(_project_yaml(False), encoding="utf-8")
    (project / ".portico").mkdir(parents=True)
    (project / ".portico" / "config.yaml").write_text(_project_yaml(True), encoding="utf-8")
    (project / "tools").mkdir()
    for i in range(10):
        (project / "tools" / f"server{i}.js").write_text(f"// server {i}\n" * 200)
    (project / "tools" / "hook.js").write_text("module.exports = {};\n")
    empty.mkdir()
    return project_home, project, baseline_home, empty


async def _reviews(config: Config) -> int:
    """Every server's trust check and review text, all at once as the hub's connections
    ask the gate when a config is applied; returns how many reviews there were."""
    gate = TrustGate(NonInteractivePrompter(), resolver=_dns(), ask=False)

    async def one(spec: ServerSpec) -> int:
        review = await gate.check(spec)
        if review is None:
            return 0
        review_detail_lines(review.request)
        return 1

    return sum(await asyncio.gather(*(one(spec) for spec in config.servers)))


async def _trust_all(config: Config) -> None:
    """Trust every project server that waits (the person's earlier run)."""
    gate = TrustGate(NonInteractivePrompter(), resolver=_dns(), ask=False)
    for spec in config.servers:
        review = await gate.check(spec) if is_reviewed(spec) else None
        if review is not None:
            await gate.apply(review, TrustChoice.TRUST)


async def _gate_pass(config: Config) -> int:
    """The gate for every server at once, as the hub's connections ask it; returns how
    many may start."""
    gate = TrustGate(NonInteractivePrompter(), resolver=_dns(), ask=False)
    verdicts = await asyncio.gather(*(gate(spec) for spec in config.servers))
    return sum(v.allowed for v in verdicts)


def reopen(home: Path, project: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, servers let through) of load + the gate's pass."""
    os.environ["PORTICO_HOME"] = str(home)
    cpu = time.process_time()
    start = time.perf_counter()
    allowed = asyncio.run(_gate_pass(load(project)))
    return time.perf_counter() - start, time.process_time() - cpu, allowed


Side = tuple[float, float, float, int, int]


def one_side(home: Path, project: Path) -> Side:
    """(load seconds, reviews seconds, CPU seconds of both, servers, reviews) with
    ``home`` as PORTICO_HOME."""
    os.environ["PORTICO_HOME"] = str(home)
    cpu = time.process_time()
    start = time.perf_counter()
    config = load(project)
    loaded = time.perf_counter()
    reviews = asyncio.run(_reviews(config))
    done = time.perf_counter()
    cpu = time.process_time() - cpu
    assert not [d for d in config.diagnostics if d.severity == "error"], config.diagnostics
    return loaded - start, done - loaded, cpu, len(config.servers), reviews


def measure(root: Path, runs: int = RUNS) -> dict[str, float]:
    project_home, project, baseline_home, empty = make_configs(root)
    saved = os.environ.get("PORTICO_HOME")
    pairs: list[tuple[Side, Side]] = []
    reopened: list[tuple[tuple[float, float, int], tuple[float, float, int]]] = []
    try:
        one_side(project_home, project)  # warm imports and caches on both sides
        one_side(baseline_home, empty)
        for run in range(runs):
            sides = [(project_home, project), (baseline_home, empty)]
            if run % 2:
                sides.reverse()
            got = {home: one_side(home, folder) for home, folder in sides}
            pairs.append((got[project_home], got[baseline_home]))
        os.environ["PORTICO_HOME"] = str(project_home)
        asyncio.run(_trust_all(load(project)))
        for run in range(runs):
            sides = [(project_home, project), (baseline_home, empty)]
            if run % 2:
                sides.reverse()
            again = {home: reopen(home, folder) for home, folder in sides}
            reopened.append((again[project_home], again[baseline_home]))
    finally:
        if saved is None:
            os.environ.pop("PORTICO_HOME", None)
        else:
            os.environ["PORTICO_HOME"] = saved
    (_, _, _, servers, reviews), (_, _, _, base_servers, base_reviews) = pairs[0]
    return {
        "servers": servers,
        "baseline servers": base_servers,
        "reviews": reviews,
        "baseline reviews": base_reviews,
        "load ms": statistics.median(p[0] * 1000 for p, _ in pairs),
        "baseline load ms": statistics.median(b[0] * 1000 for _, b in pairs),
        "reviews ms": statistics.median(p[1] * 1000 for p, _ in pairs),
        "baseline reviews ms": statistics.median(b[1] * 1000 for _, b in pairs),
        "load ratio": statistics.median(p[0] / b[0] for p, b in pairs),
        "total ratio": statistics.median((p[0] + p[1]) / (b[0] + b[1]) for p, b in pairs),
        "cpu ms": statistics.median(p[2] * 1000 for p, _ in pairs),
        "baseline cpu ms": statistics.median(b[2] * 1000 for _, b in pairs),
        "cpu ratio": statistics.median(p[2] / b[2] for p, b in pairs),
        "reopen allowed": reopened[0][0][2],
        "reopen ms": statistics.median(p[0] * 1000 for p, _ in reopened),
        "baseline reopen ms": statistics.median(b[0] * 1000 for _, b in reopened),
        "reopen ratio": statistics.median(p[0] / b[0] for p, b in reopened),
        "reopen cpu ratio": statistics.median(p[1] / b[1] for p, b in reopened),
    }


def report(figures: dict[str, float]) -> None:
    print()
    print(
        f"400-server config: {figures['servers']:.0f} servers with a project, "
        f"{figures['reviews']:.0f} reviews; baseline {figures['baseline servers']:.0f} "
        f"global servers, {figures['baseline reviews']:.0f} reviews (median of {RUNS} pairs)"
    )
    print(
        f"  config load + merge: {figures['load ms']:.1f} ms vs {figures['baseline load ms']:.1f}"
        f" ms baseline: {figures['load ratio']:.2f}x"
    )
    print(
        f"  every review (check + TrustRequest + lines): {figures['reviews ms']:.1f} ms vs "
        f"{figures['baseline reviews ms']:.1f} ms baseline; per review "
        f"{figures['reviews ms'] / max(figures['reviews'], 1):.2f} ms vs "
        f"{figures['baseline reviews ms'] / max(figures['baseline reviews'], 1):.2f} ms"
    )
    print(f"  load + reviews: {figures['total ratio']:.2f}x the baseline (goal <= 1.1x)")
    print(
        f"  CPU time of both: {figures['cpu ms']:.1f} ms vs {figures['baseline cpu ms']:.1f} ms"
        f" baseline: {figures['cpu ratio']:.2f}x"
    )
    print(
        f"  reopen, the project's servers trusted before: load + the gate for every server"
        f" ({figures['reopen allowed']:.0f} let through): {figures['reopen ms']:.1f} ms vs "
        f"{figures['baseline reopen ms']:.1f} ms baseline: {figures['reopen ratio']:.2f}x "
        f"(CPU {figures['reopen cpu ratio']:.2f}x)"
    )


def test_trust_review_of_a_400_server_project_config_costs_what_the_global_one_does(
    tmp_path: Path,
) -> None:
    figures = measure(tmp_path)
    report(figures)
    assert figures["servers"] == figures["baseline servers"] == 400
    assert figures["reviews"] >= 250  # the project's stdio, HTTPS and replaced servers
    assert figures["reopen allowed"] == 400  # every decision, pin and class still matched


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        report(measure(Path(tmp)))
