"""Project stdio servers whose gates ask together have their launch files pinned in one
worker-thread hop, each server with its own files, and an edit after trust still asks
again. Real project folder, loader, gate and trust store."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from portico.config import load
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.trust import TrustGate
from portico.prompts import TrustChoice
from portico.runtime.sandbox.probe import sandbox_method

SERVERS = 6


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting the jobs handed to worker threads."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.jobs = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.jobs += 1
        return super().submit(fn, *args, **kwargs)


def _project(project: Path) -> None:
    (project / "tools").mkdir(parents=True)
    (project / ".portico").mkdir(exist_ok=True)
    lines = ["mcp_servers:\n"]
    for i in range(SERVERS):
        (project / "tools" / f"s{i}.js").write_text(f"// server {i}\n", encoding="utf-8")
        lines.append(f"  s{i}:\n    command: node\n    args: [tools/s{i}.js]\n")
    (project / ".portico" / "config.yaml").write_text("".join(lines), encoding="utf-8")


async def test_many_servers_pin_in_one_hop_each_with_its_own_files(
    portico_home: Path, project: Path
) -> None:
    _project(project)
    specs = load(project).servers
    assert len(specs) == SERVERS
    await sandbox_method()  # asked once per process (the reviews name it), not a pin hop
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    gate = TrustGate(NonInteractivePrompter(), ask=False)
    reviews = await asyncio.gather(*(gate.check(spec) for spec in specs))
    assert executor.jobs == 1  # one hop for all (one per server before)
    for spec, review in zip(specs, reviews, strict=True):
        assert review is not None
        (line,) = review.request.pinned_files
        assert line.startswith(f"tools/{spec.name}.js ")
        assert review.bound["files"][0][0] == f"tools/{spec.name}.js"

    for review in reviews:
        assert review is not None
        assert (await gate.apply(review, TrustChoice.TRUST)).allowed
    (project / "tools" / "s3.js").write_text("// evil\n", encoding="utf-8")
    fresh = TrustGate(NonInteractivePrompter(), ask=False)
    verdicts = await asyncio.gather(*(fresh(spec) for spec in load(project).servers))
    assert [v.allowed for v in verdicts] == [i != 3 for i in range(SERVERS)]
    assert any("tools/s3.js" in r for r in verdicts[3].reasons)
