"""Start tests/servers/iconic.py (an SDK server announcing icons) on 127.0.0.1."""

from __future__ import annotations

from tests.helpers.servers import SERVERS, RunningServer, start_script

ICONIC = SERVERS / "iconic.py"


def start_iconic(*extra: str) -> RunningServer:
    return start_script(ICONIC, *extra)
