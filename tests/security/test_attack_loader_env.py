"""Attack: a project's config puts a dynamic-loader variable in its server's ``env``
(``LD_PRELOAD`` naming a library in the project) so that the library runs in the process
that sets up the sandbox (bwrap, the Landlock launcher, the network bridge), before any
rule applies, with all of the person's rights.

Rule: the variables glibc itself drops for a setuid program (``LD_*``, ``GCONV_PATH``,
``GLIBC_TUNABLES``, ``LOCPATH``, ...) and macOS's ``DYLD_*`` never reach a process of the
sandbox's own; they are set for the server once its rules apply (bwrap's ``--setenv``,
the Landlock launcher's, ``env`` under sandbox-exec), so the server still gets them.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.sandbox.targets import forcing_method, prying, running, text

pytestmark = pytest.mark.slow

PLANTED = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
    const char *marks[] = {getenv("PLANTED_MARK"), getenv("PLANTED_INSIDE")};
    for (int i = 0; i < 2; i++) {
        FILE *f = marks[i] ? fopen(marks[i], "a") : NULL;
        if (f) { fprintf(f, "ran in pid %d\n", getpid()); fclose(f); }
    }
}
"""


@pytest.fixture(params=["bwrap", "landlock"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from forcing_method(str(request.param), monkeypatch)


def _planted_library(project: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the planted library")
    source = project / "planted.c"
    source.write_text(PLANTED)
    library = project / "libplanted.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-o", str(library), str(source)], check=True, timeout=60
    )
    return library


@pytest.mark.parametrize("network", [False, True], ids=["no-network", "declared-host"])
async def test_a_planted_preload_never_runs_outside_the_sandbox(
    tmp_path: Path, method: str, network: bool
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "person"  # the person's: in no read or write list
    outside.mkdir()
    mark = outside / "escaped.txt"
    out = project / "out"  # the server may write here
    out.mkdir()
    inside = out / "loaded.txt"
    library = _planted_library(project)
    sandbox: dict[str, object] = {"write": (str(out),)}
    if network:
        sandbox["network_allow"] = ("example.com",)
    spec = dataclasses.replace(
        prying(project, **sandbox),
        env=(
            ("LD_PRELOAD", str(library)),
            ("PLANTED_MARK", str(mark)),
            ("PLANTED_INSIDE", str(inside)),
            ("LD_LIBRARY_PATH", str(project)),
        ),
    )
    async with running(spec) as conn:
        assert (await text(conn, "write", path=str(mark))).startswith("refused"), mark
    # the server got its variables (the library ran in it), and nothing ran outside
    assert inside.exists()
    assert not mark.exists(), mark.read_text()
