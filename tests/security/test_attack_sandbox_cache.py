"""Attack: a sandboxed project server run by ``npx`` writes into the npm cache, hoping an
unsandboxed ``npx`` later runs what it left (``~/.npm/_npx/<hash>/node_modules`` is code).
The sandbox's cache is its own: it reads what the person has cached (so ``npx -y``
starts without a download) and writes only to its own layer, which it finds again next
time; the person's cache and another server's layer stay as they were. Under bwrap (an
overlay) and under Landlock (the tool pointed at the layer, the real cache refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from portico.runtime.sandbox.launch import landlock_launch, sandboxed_launch
from portico.runtime.sandbox.network import SandboxNet
from tests.runtime.sandbox.targets import need_bwrap, need_landlock, prying

# A stand-in for npx: reads a cached file, then plants a file in the cache.
FAKE_NPX = """#!/bin/sh
real="$1/.npm"  # the person's cache, where it is outside the sandbox
cache="${npm_config_cache:-$real}"
cat "$cache/_cacache/seeded.txt" 2>/dev/null || echo "no seed"
cat "$cache/_npx/planted/index.js" 2>/dev/null || echo "nothing planted yet"
mkdir -p "$real/_npx/planted" "$cache/_npx/planted" 2>/dev/null
echo "evil()" > "$real/_npx/planted/index.js" 2>/dev/null || echo "real cache refused"
echo "evil()" > "$cache/_npx/planted/index.js" || echo "own cache refused"
"""


@pytest.fixture
def npx(tmp_path: Path) -> Path:
    folder = tmp_path / "node" / "bin"
    folder.mkdir(parents=True)
    script = folder / "npx"
    script.write_text(FAKE_NPX)
    script.chmod(0o755)
    return script


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "person"
    (home / ".npm" / "_cacache").mkdir(parents=True)
    (home / ".npm" / "_cacache" / "seeded.txt").write_text("cached by the person\n")
    return home


def _run(argv: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_under_bwrap_the_cache_is_seeded_and_the_persons_stays_clean(
    project: Path, home: Path, npx: Path
) -> None:
    bwrap = need_bwrap()
    spec = prying(project)

    def run(spec_: object) -> list[str]:
        argv, extra = sandboxed_launch(
            spec_, bwrap, str(npx), [str(home)], cwd=str(project), env={}, home=str(home)
        )  # type: ignore[arg-type]
        return _run(argv, {**os.environ, "HOME": str(home), **extra})

    first = run(spec)
    assert first[:2] == ["cached by the person", "nothing planted yet"], first
    assert not (home / ".npm" / "_npx").exists(), "the person's cache was written"
    again = run(spec)
    assert again[:2] == ["cached by the person", "evil()"], again  # its own layer kept
    other = run(replace(spec, name="other"))
    assert other[:2] == ["cached by the person", "nothing planted yet"], other
    assert not (home / ".npm" / "_npx").exists()


def test_under_landlock_the_real_cache_is_refused(project: Path, home: Path, npx: Path) -> None:
    need_landlock()
    spec = prying(project)
    private = project.parent / "private"
    private.mkdir()
    argv, extra = landlock_launch(
        spec,
        str(npx),
        [str(home)],
        cwd=str(project),
        env={},
        home=str(home),
        private=str(private),
        net=SandboxNet(),
        connect="any",
    )
    out = _run(argv, {**os.environ, "HOME": str(home), **extra})
    assert "real cache refused" in out, out
    assert "own cache refused" not in out, out
    assert not (home / ".npm" / "_npx").exists(), "the person's cache was written"
    assert sys.executable  # the wrapper ran under this interpreter
