"""Helpers for the attack-style CLI tests: a real project folder, the real ``portico``
in its own process, and a recording MCP server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.servers import free_port, wait_port
from tests.helpers.warm import python_command

REPO = Path(__file__).resolve().parents[2]
RECORDER = REPO / "tests" / "servers" / "recorder.py"


@dataclass
class Recorder:
    url: str
    log: Path
    process: subprocess.Popen[bytes]

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def received(self) -> str:
        """Everything that arrived, as one text to search."""
        return self.log.read_text() if self.log.exists() else ""


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Recorder]:
    port = free_port()
    log = tmp_path / "recorder.jsonl"
    process = subprocess.Popen(
        [sys.executable, str(RECORDER), "--port", str(port), "--log", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, process)
    except RuntimeError:
        process.kill()
        raise
    try:
        yield Recorder(f"http://127.0.0.1:{port}/mcp", log, process)
    finally:
        process.kill()
        process.wait(10)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PORTICO_HOME"] = str(home)
    # Never the real keyring: the fail backend, and secrets.file_fallback in the config.
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env.update(extra)
    return env


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def portico(
    home: Path,
    *args: str,
    cwd: Path | None = None,
    stdin: str = "",
    timeout: float = 90,
    **env: str,
) -> Run:
    done = subprocess.run(
        python_command("-m", "portico.cli.main", *args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=cli_env(home, **env),
    )
    return Run(done.returncode, done.stdout, done.stderr)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def global_yaml(home: Path, text: str) -> Path:
    return write(home / "config" / "config.yaml", text)


def global_toml(home: Path, text: str) -> Path:
    return write(home / "config" / "mcp.toml", text)
