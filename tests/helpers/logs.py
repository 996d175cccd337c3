"""The type of the ``allow_logs`` fixture (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

AllowLogs = Callable[[str], None]
"""``allow_logs(r"regex")``: a Portico warning/error matching it is expected in this test."""
