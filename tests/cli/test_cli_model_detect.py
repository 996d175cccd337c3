"""``portico model detect`` as a command: it probes the ports it is told to (``--port``,
``$PORTICO_DETECT_PORTS``) on 127.0.0.1, where the scripted model server answers
``GET /v1/models`` as an OpenAI-compatible server does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.model_server import model_server, models
from tests.helpers.servers import free_port
from tests.servers.model_server import ModelServer

__all__ = ["model_server", "models"]

pytestmark = pytest.mark.slow  # runs portico as its own process


def test_detect_offers_the_server_that_answers(portico_home: Path, models: ModelServer) -> None:
    out = run_cli(
        portico_home, "model", "detect", "--port", str(free_port()), "--port", str(models.port)
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"OpenAI-compatible server at {models.openai_url}: claude-test, gpt-test, vision-test",
        f"  add it with: portico model add local-{models.port} --kind openai --base-url "
        f"{models.openai_url} --default claude-test",
    ]


def test_detect_reads_its_ports_from_the_environment_and_prints_json(
    portico_home: Path, models: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTICO_DETECT_PORTS", f"{free_port()}, {models.port}")
    out = run_cli(portico_home, "model", "detect", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [
        {
            "label": "OpenAI-compatible server",
            "name": f"local-{models.port}",
            "base_url": models.openai_url,
            "models": ["claude-test", "gpt-test", "vision-test"],
            "details": [  # a plain OpenAI-compatible server says nothing more about them
                {"id": m, "size": None, "context_length": None, "tools": None}
                for m in ("claude-test", "gpt-test", "vision-test")
            ],
        }
    ]


def test_detect_add_writes_the_provider_and_makes_it_the_default(
    portico_home: Path, models: ModelServer
) -> None:
    out = run_cli(portico_home, "model", "detect", "--port", str(models.port), "--add")
    assert out.returncode == 0, out.stderr
    listed = run_cli(portico_home, "model", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["default"] == f"local-{models.port}/claude-test"
    [provider] = data["providers"]
    assert provider["base_url"] == models.openai_url and provider["kind"] == "openai"
    assert provider["models"] == ["claude-test", "gpt-test", "vision-test"]


def test_nothing_found_says_what_was_tried(portico_home: Path) -> None:
    closed = free_port()
    out = run_cli(portico_home, "model", "detect", "--port", str(closed))
    assert out.returncode == 1
    assert out.stdout == (
        f"No local model server answered on 127.0.0.1 (tried OpenAI-compatible server "
        f"{closed}). Start one, or add a provider with `portico model add`.\n"
    )
    as_json = run_cli(portico_home, "model", "detect", "--port", str(closed), "--json")
    assert as_json.returncode == 0  # --json: an empty list is the answer, not a failure
    assert json.loads(as_json.stdout) == []


def test_a_bad_port_in_the_environment_is_named(
    portico_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTICO_DETECT_PORTS", "11434,lots")
    out = run_cli(portico_home, "model", "detect")
    assert out.returncode == 2
    assert out.stderr.strip() == "portico: PORTICO_DETECT_PORTS: 'lots' is not a port number"
    assert "Traceback" not in out.stderr
