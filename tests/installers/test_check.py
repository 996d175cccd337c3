"""installers/check as a test: minutes long, so only with PORTICO_INSTALLERS_CHECK=1."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.installers,
    pytest.mark.skipif(
        os.environ.get("PORTICO_INSTALLERS_CHECK") != "1",
        reason="builds and installs the .deb (minutes): set PORTICO_INSTALLERS_CHECK=1",
    ),
]


@pytest.mark.timeout(1800)  # the suite's 120 s would stop it while it builds
def test_the_package_installs_launches_opens_a_link_and_quits() -> None:
    proc = subprocess.run(
        [str(ROOT / "installers" / "check")], capture_output=True, text=True, timeout=1800
    )
    print(proc.stdout[proc.stdout.find("== launch under Xvfb") :])  # the figures, with -s
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "installers/check: OK" in proc.stdout
