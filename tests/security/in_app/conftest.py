"""Attacks tried against the running app: their coroutines run on the app's own hooked
qasync loop, as the UI tests' do (tests/ui/conftest.py)."""

from __future__ import annotations

from tests.ui.conftest import pytest_asyncio_loop_factories, pytest_runtest_setup

__all__ = ["pytest_asyncio_loop_factories", "pytest_runtest_setup"]
