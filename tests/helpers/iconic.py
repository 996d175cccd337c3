"""Start tests/servers/iconic.py (an SDK server announcing icons) on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.servers import SERVERS, RunningServer, free_port, wait_port

ICONIC = SERVERS / "iconic.py"


def start_iconic(*extra: str) -> RunningServer:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ICONIC), "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
    except BaseException:
        proc.kill()
        raise
    return RunningServer(f"http://127.0.0.1:{port}/mcp", port, proc)
