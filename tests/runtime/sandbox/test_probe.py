"""The sandbox probe runs once however many ask at once: the trust gates of a config's
servers all ask when it is applied (each review names the method), and must not start a
bwrap probe each."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from portico.runtime.sandbox import probe
from tests.runtime.sandbox.targets import need_bwrap


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting the jobs handed to worker threads."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.jobs = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.jobs += 1
        return super().submit(fn, *args, **kwargs)


@pytest.fixture
def fresh_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    probe.forget()
    yield monkeypatch
    probe.forget()


async def test_many_asking_at_once_run_one_probe(fresh_probe: pytest.MonkeyPatch) -> None:
    need_bwrap()
    fresh_probe.setenv(probe.METHODS_ENV, "bwrap")
    probe.forget()  # need_bwrap's own check answers nothing here
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    answers = await asyncio.gather(*(probe.sandbox_method() for _ in range(6)))
    assert executor.jobs == 2  # `bwrap ... true`, then `bwrap --help` (overlays): once
    method, problem = answers[0]
    assert problem is None and method is not None and method.kind == "bwrap"
    assert all(answer == answers[0] for answer in answers)
    await probe.sandbox_method()
    assert executor.jobs == 2  # answered from what it found


async def test_on_windows_every_face_says_it_cannot_sandbox(
    fresh_probe: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Windows is not supported: the probe says so, and so do the list's word and note
    and the rules (the faces read these)."""
    import sys

    from portico.config.model import Scope
    from portico.runtime.sandbox.describe import method_note, method_word, sandbox_rules
    from tests.helpers.specs import spec_for

    fresh_probe.setattr(sys, "platform", "win32")
    method, problem = await probe.sandbox_method()
    assert method is None and problem == "sandboxing servers is not supported on Windows yet"
    assert method_word() == "none"
    assert method_note().startswith("none: sandboxing servers is not supported on Windows yet")
    project = tmp_path / "project"
    spec = spec_for("w", scope=Scope.PROJECT, project=project, command="server.exe")
    rules = sandbox_rules(spec)
    assert rules[-1].startswith("Windows cannot sandbox servers yet (not supported)"), rules
