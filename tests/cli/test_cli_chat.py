"""``portico chat`` and ``portico model`` as real processes: a scripted model server on
loopback, server-everything over stdio, the non-interactive Prompter."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.paths import paths
from tests.helpers.servers import EVERYTHING, NODE
from tests.helpers.warm import python_command
from tests.servers.model_server import ModelServer, text, tool_call

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed"),
    pytest.mark.slow,
]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        python_command("-m", "portico.cli.main", *args),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def configured(portico_home: Path, server: ModelServer) -> ModelServer:
    server.script()
    with server.state.lock:
        server.state.requests.clear()
    folder = paths().global_toml.parent
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mcp.toml").write_text(
        "[mcp.everything]\n"
        f"command = {json.dumps(str(NODE))}\n"
        f'args = [{json.dumps(str(EVERYTHING))}, "stdio"]\n'
        'protocol = "legacy"\n'
        'tool_costs = { "get-sum" = 5 }\n'
        "spend_limit = 3\n"
    )
    (folder / "config.yaml").write_text(
        "# my models\n"
        "models:\n"
        "  providers:\n"
        "    scripted:\n"
        "      kind: openai\n"
        f"      base_url: {server.openai_url}\n"
        '      api_key: "${env:SCRIPTED_KEY}"\n'
        "      models: [gpt-test]\n"
        "  default: scripted/gpt-test\n"
    )
    return server


def test_chat_q_spend_limit_refusal_is_told_to_the_model(configured: ModelServer) -> None:
    configured.script(
        tool_call("everything__get-sum", {"a": 2, "b": 40}),
        text("I could not run it: it needs an approval."),
    )
    out = run("chat", "-q", "What is 2 + 40?", env={"SCRIPTED_KEY": "sk-test-123"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "I could not run it: it needs an approval.\n"
    assert "← everything__get-sum: refused" in out.stderr
    first, second = configured.requests  # no third: the title is made here, not by the model
    assert first.headers["authorization"] == "Bearer sk-test-123"
    assert "Nobody can answer approval questions" in first.body["messages"][0]["content"]
    told = next(m for m in second.body["messages"] if m["role"] == "tool")["content"]
    assert "Refused without running" in told and "Do not retry" in told
    assert "sk-test-123" not in out.stderr + out.stdout


def test_chat_q_json_events_and_a_failed_turn(configured: ModelServer) -> None:
    configured.script(text("Hello there."))
    out = run("chat", "-q", "hi", "--json", env={"SCRIPTED_KEY": "k"})
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["UserMessageAdded", "TitleChanged"] and kinds[-1] == "TurnFinished"
    assert events[1]["title"] == "hi"  # the first words, without a request to the model
    assert len(configured.requests) == 1
    assert "".join(e["text"] for e in events if e["type"] == "TextDelta") == "Hello there."
    configured.script({"status": 401})
    bad = run("chat", "-q", "hi", env={"SCRIPTED_KEY": "wrong"})
    assert bad.returncode == 1
    assert "refused the API key" in bad.stderr and "Traceback" not in bad.stderr
    unset = run("chat", "-q", "hi")  # the key's variable is not set
    assert unset.returncode == 1 and "environment variable SCRIPTED_KEY is not set" in unset.stderr


def test_direct_mode_call_list_and_export(portico_home: Path) -> None:
    folder = paths().global_toml.parent
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mcp.toml").write_text(
        "[mcp.everything]\n"
        f"command = {json.dumps(str(NODE))}\n"
        f'args = [{json.dumps(str(EVERYTHING))}, "stdio"]\n'
        'protocol = "legacy"\n'
    )
    out = run("chat", "-q", '/call everything__get-sum {"a": 2, "b": 40}')
    assert out.returncode == 0, out.stderr
    assert out.stdout == "The sum of 2 and 40 is 42.\n"
    prompt = run("chat", "-q", "/everything:args-prompt Oslo")
    assert prompt.returncode == 0 and prompt.stdout.strip() == "What's weather in Oslo?"
    listed = json.loads(run("chat", "--list", "--json").stdout)
    assert [row["messages"] for row in listed] == [1, 2]  # newest first
    exported = run("chat", "--export", listed[1]["id"][:6], "--format", "md")
    assert exported.returncode == 0
    assert "**Tool call** `everything__get-sum`" in exported.stdout
    data = json.loads(run("chat", "--export", listed[1]["id"], "--format", "json").stdout)
    assert data["messages"][1]["tool_calls"][0]["result"] == "The sum of 2 and 40 is 42."
    found = run("chat", "--search", "weather")
    assert listed[0]["id"][:8] in found.stdout and "[weather]" in found.stdout.lower()
    missing = run("chat", "--export", "nope")
    assert missing.returncode == 1 and "no conversation nope" in missing.stderr


def test_model_add_list_and_test(portico_home: Path, server: ModelServer) -> None:
    server.script()
    added = run(
        "model",
        "add",
        "local",
        "--kind",
        "openai",
        "--base-url",
        server.openai_url,
        "--default",
        "gpt-test",
    )
    assert added.returncode == 0, added.stderr
    toml = paths().global_toml.read_text()  # mcp.toml, as `mcp add` chooses with no files
    assert "[models.providers.local]" in toml and "api_key" not in toml  # no terminal: no key
    assert 'default_model = "local/gpt-test"' in toml
    listed = run("model", "list")
    assert "local (openai)" in listed.stdout and "* local/gpt-test" in listed.stdout
    assert f"{paths().global_toml}:" in listed.stdout
    tested = run("model", "test", "local")
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith("local/gpt-test answered in ")
    again = run("model", "add", "local", "--kind", "openai")
    assert again.returncode == 1 and "exists" in again.stderr
    ref = run("model", "add", "cloud", "--kind", "anthropic", "--api-key-ref", "nothing-here")
    assert ref.returncode == 1 and "portico secret set nothing-here" in ref.stderr


def test_a_plain_api_key_in_a_file_is_an_error_saying_how_to_store_it(portico_home: Path) -> None:
    paths().global_yaml.parent.mkdir(parents=True, exist_ok=True)
    paths().global_yaml.write_text(
        "models:\n  providers:\n    openai:\n      kind: openai\n      api_key: sk-live-abc\n"
    )
    out = run("model", "list")
    assert "config.yaml:5: models.providers.openai.api_key: holds a plain API key" in out.stderr
    assert "portico secret set openai" in out.stderr and "sk-live-abc" not in out.stderr


def test_chat_q_prints_the_answers_cost_and_the_chats(configured: ModelServer) -> None:
    config = paths().global_toml.parent / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "      models: [gpt-test]\n",
            "      models: [gpt-test]\n      prices: {gpt-test: {input: 10, output: 20}}\n",
        )
    )
    configured.script(text("Hello there.", usage={"input": 1200, "output": 30}))
    out = run("chat", "-q", "hi", env={"SCRIPTED_KEY": "k"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Hello there.\n"
    assert "(1,200 in · 30 out · $0.0126; this chat so far: $0.0126)" in out.stderr


def test_chat_flags_set_the_chats_own_settings_and_resume_keeps_them(
    configured: ModelServer,
) -> None:
    configured.script(text("Bonjour."), text("Encore."))
    env = {"SCRIPTED_KEY": "k"}
    out = run(
        "chat",
        "-q",
        "hi",
        "--system",
        "Answer in French.",
        "--temperature",
        "0.3",
        "--max-tokens",
        "256",
        "--reasoning-effort",
        "low",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    chat_id = out.stderr.split("(chat ")[1].split(";")[0]
    body = configured.requests[0].body
    assert (body["temperature"], body["max_tokens"], body["reasoning_effort"]) == (0.3, 256, "low")
    assert body["messages"][0]["content"].endswith("\n\nAnswer in French.")
    again = run("chat", "--resume", chat_id, "-q", "more", "--temperature", "", env=env)
    assert again.returncode == 0, again.stderr
    body = configured.requests[1].body
    assert "temperature" not in body  # cleared; the provider sets none
    assert (body["max_tokens"], body["reasoning_effort"]) == (256, "low")
    assert body["messages"][0]["content"].endswith("\n\nAnswer in French.")
    bad = run("chat", "-q", "hi", "--temperature", "5", env=env)
    assert bad.returncode == 2 and "temperature: must be between 0 and 2, not 5.0" in bad.stderr
    assert len(configured.requests) == 2
