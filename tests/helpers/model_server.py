"""The scripted model server (``tests/servers/model_server.py``) as fixtures: one server
per test module, its script and recorded requests reset for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.model_server import ModelServer


@pytest.fixture(scope="module")
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def models(model_server: ModelServer) -> ModelServer:
    """The module's model server with an empty script and no recorded requests."""
    model_server.script()
    model_server.set_default({"text": "ok"})
    model_server.state.contexts = {}
    with model_server.state.lock:
        model_server.state.requests.clear()
    return model_server
