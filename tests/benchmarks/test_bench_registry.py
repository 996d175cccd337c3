"""Registry of 3,300 tools (a Cloudflare-sized server): build time and tool_search p95.

Run: ``python -m pytest tests/benchmarks/test_bench_registry.py -s`` or as a script.
Targets (printed, not asserted): build < 150 ms, tool_search p95 < 5 ms.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import mcp_types as t

from portico.config.model import Dialect, Scope, ServerSpec, Source, Transport
from portico.runtime.registry import Registry
from portico.runtime.toolsearch import ActiveSet

AREAS = [
    "dns",
    "workers",
    "kv",
    "r2",
    "zones",
    "firewall",
    "pages",
    "d1",
    "queues",
    "images",
    "stream",
    "access",
    "tunnels",
    "waf",
    "cache",
    "analytics",
    "email",
    "ai",
    "vectorize",
    "durable_objects",
    "logpush",
    "load_balancers",
    "ssl",
    "spectrum",
    "rulesets",
]
VERBS = [
    "list",
    "get",
    "create",
    "update",
    "delete",
    "purge",
    "deploy",
    "rollback",
    "query",
    "export",
    "import",
    "enable",
    "disable",
]
PARAMS = [
    "account_id",
    "zone_id",
    "name",
    "id",
    "page",
    "per_page",
    "filter",
    "body",
    "script_name",
    "bucket",
    "key",
    "value",
    "ttl",
    "comment",
    "tags",
]


def make_tools(n: int = 3300, seed: int = 7) -> list[t.Tool]:
    rng = random.Random(seed)
    tools = []
    for i in range(n):
        area, verb = AREAS[i % len(AREAS)], VERBS[(i // len(AREAS)) % len(VERBS)]
        params = rng.sample(PARAMS, 4)
        tools.append(
            t.Tool(
                name=f"{verb}_{area}_{i}",
                description=(
                    f"{verb.capitalize()} {area.replace('_', ' ')} objects for an account. "
                    f"Returns the {area} records with pagination; see the {area} API docs."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        p: {"type": "string", "description": f"The {p}"} for p in params
                    },
                    "required": params[:1],
                },
            )
        )
    return tools


def spec() -> ServerSpec:
    return ServerSpec(
        name="cloudflare",
        source=Source(Path("/bench/mcp.toml"), 1, Scope.GLOBAL, Dialect.TOML),
        transport=Transport.HTTP,
        url="https://example.invalid/mcp",
    )


def bench() -> dict[str, float]:
    tools = make_tools()
    builds = []
    cpu = []
    registry_only = []
    for _ in range(7):
        started, cpu_started = time.perf_counter(), time.process_time()
        reg = Registry(defer_tools=10)
        reg.set_server(spec(), tools)
        registry_only.append(time.process_time() - cpu_started)
        reg.index()
        reg.model_tools(ActiveSet())
        builds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    rng = random.Random(1)
    queries = [
        f"{rng.choice(VERBS)} {rng.choice(AREAS).replace('_', ' ')} {rng.choice(PARAMS)}"
        for _ in range(500)
    ]
    times = []
    for q in queries:
        started = time.perf_counter()
        reg.search(q, ActiveSet(), limit=5)
        times.append(time.perf_counter() - started)
    times.sort()
    figures = {
        "tools": float(len(reg)),
        "build_median_ms": statistics.median(builds) * 1000,
        "build_max_ms": max(builds) * 1000,
        "build_cpu_median_ms": statistics.median(cpu) * 1000,
        "set_server_cpu_median_ms": statistics.median(registry_only) * 1000,
        "search_median_ms": statistics.median(times) * 1000,
        "search_p95_ms": times[int(len(times) * 0.95)] * 1000,
    }
    print(
        f"\nregistry of {int(figures['tools'])} tools: build median "
        f"{figures['build_median_ms']:.1f} ms wall, {figures['build_cpu_median_ms']:.1f} ms CPU "
        f"(max wall {figures['build_max_ms']:.1f}; target < 150; includes the search index; "
        f"set_server alone {figures['set_server_cpu_median_ms']:.1f} ms CPU)"
        f"\ntool_search over 500 queries: median {figures['search_median_ms']:.2f} ms, "
        f"p95 {figures['search_p95_ms']:.2f} ms (target < 5)"
    )
    return figures


def test_registry_figures() -> None:
    figures = bench()
    assert figures["tools"] == 3300


if __name__ == "__main__":
    bench()
