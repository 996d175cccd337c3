"""``portico serve`` as a person runs it, fronting an SDK test server and server-everything:
the SDK's client and ``portico mcp call`` use it; without it the CLI goes direct."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from portico.paths import paths
from tests.gateway.helpers import ACCEPT, INITIALIZE, sdk_client, texts
from tests.helpers.servers import EVERYTHING, NODE, TOOLBOX

pytestmark = [pytest.mark.slow, pytest.mark.npm]


def portico(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "portico.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ},
        check=False,
    )


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    token: str  # a client's, from `portico clients add`


def write_config() -> None:
    folder = paths().config_dir
    folder.mkdir(parents=True, exist_ok=True)
    toolbox = json.dumps([sys.executable, str(TOOLBOX), "stdio"])
    everything = json.dumps([str(NODE), str(EVERYTHING), "stdio"])
    (folder / "mcp.toml").write_text(
        "defer_tools = 1000\n\n"
        f'[mcp.tb]\ncommand = {toolbox}\ntrust = "full"\n\n'
        f"[mcp.everything]\ncommand = {everything}\n"
    )
    # No keyring on the test machine: client tokens go to 0600 files, as a person would set it.
    (folder / "config.yaml").write_text("secrets:\n  file_fallback: true\n")


def start_serve() -> subprocess.Popen[str]:
    # stderr to a file: an unread pipe would stop the server once it filled
    paths().log_dir.mkdir(parents=True, exist_ok=True)
    errors = (paths().log_dir / "serve-stderr.txt").open("w")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "portico.cli.main", "serve"],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ},
        )
    finally:
        errors.close()


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


@pytest.fixture
def served(portico_home: Path) -> Iterator[Served]:
    write_config()
    added = portico("clients", "add", "test-client")
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    process = start_serve()
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        assert first.startswith("Portico endpoint: http://127.0.0.1:"), (first, process.stderr)
        # the socket's line (its path, or why there is none), then the hub's summary
        lines = [process.stdout.readline().strip() for _ in range(2)]
        assert lines[0].startswith("socket: "), lines
        assert lines[-1].startswith("MCP: registered"), lines
        yield Served(process, first.removeprefix("Portico endpoint: "), token)
    finally:
        stop(process)


async def test_the_sdk_client_lists_and_calls_both_servers(served: Served) -> None:
    async with sdk_client(served.url, served.token) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        echoed = await client.call_tool("everything__echo", {"message": "from afar"})
        added = await client.call_tool("tb__add", {"a": 2, "b": 3})
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"tb__echo", "everything__echo"} <= names
    assert "from afar" in texts(echoed) and not echoed.is_error
    assert texts(added) == "5"
    assert "tb__greet" in prompts


async def test_no_token_is_401_and_a_foreign_origin_is_403(served: Served) -> None:
    async with httpx2.AsyncClient() as http:
        bare = await http.post(served.url, json=INITIALIZE, headers=ACCEPT)
        foreign = await http.post(
            served.url,
            json=INITIALIZE,
            headers={
                **ACCEPT,
                "Authorization": f"Bearer {served.token}",
                "Origin": "http://evil.example",
            },
        )
    assert bare.status_code == 401
    assert foreign.status_code == 403


def test_the_cli_uses_the_running_endpoint_and_goes_direct_without_it(served: Served) -> None:
    found = paths().state_dir / "endpoint.json"
    assert stat.S_IMODE(found.stat().st_mode) == 0o600
    assert json.loads(found.read_text())["url"] == served.url
    live = portico("mcp", "call", "tb", "echo", "--args", '{"text": "hi"}', "-v")
    assert live.returncode == 0, live.stderr
    assert live.stdout.strip() == "echo: hi"
    assert "via the running Portico" in live.stderr
    listed = portico("mcp", "list", "-v", "--json")
    assert "via the running Portico" in listed.stderr
    rows = {r["name"]: r["status"] for r in json.loads(listed.stdout)["servers"]}
    assert rows == {"tb": "Running", "everything": "Running"}
    stop(served.process)
    assert not found.exists()  # the endpoint removed it on the way out
    direct = portico("mcp", "call", "tb", "echo", "--args", '{"text": "hi"}', "-v")
    assert direct.returncode == 0, direct.stderr
    assert direct.stdout.strip() == "echo: hi"
    assert "direct: no running Portico" in direct.stderr


def test_a_command_for_another_project_goes_direct(served: Served, project: Path) -> None:
    command = json.dumps([sys.executable, str(TOOLBOX.parent / "tiny.py"), "--name", "proj"])
    (project / ".portico" / "mcp.toml").write_text(f"[mcp.proj]\ncommand = {command}\n")
    out = portico("mcp", "tools", "tb", "-v", "--project", str(project))
    assert out.returncode == 0, out.stderr
    assert "direct: the running Portico has not loaded this config" in out.stderr
    assert "tb__echo" in out.stdout


async def test_serve_follows_an_edit_of_the_config(served: Served) -> None:
    toml = paths().global_toml
    tiny = json.dumps([sys.executable, str(TOOLBOX.parent / "tiny.py"), "--name", "late"])
    toml.write_text(toml.read_text() + f'\n[mcp.late]\ncommand = {tiny}\ntrust = "full"\n')
    assert served.process.stdout is not None
    summary = served.process.stdout.readline()  # the reload's summary line
    errors = (paths().log_dir / "serve-stderr.txt").read_text()
    assert "from 3 server(s)" in summary, (summary, errors)
    async with sdk_client(served.url, served.token) as client:
        echoed = await client.call_tool("late__echo", {"text": "new"})
    assert texts(echoed) == "new"
    out = portico("mcp", "call", "late", "echo", "--args", '{"text": "cli"}', "-v")
    assert out.returncode == 0, out.stderr
    assert "via the running Portico" in out.stderr and out.stdout.strip() == "cli"
