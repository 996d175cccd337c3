"""``portico model detect``'s details: each model's size, context length and whether it
takes tool calls, read from small HTTP servers on 127.0.0.1 that speak Ollama's, LM
Studio's and llama.cpp's APIs in their real shapes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.chat.detect import detect_local, probes
from portico.chat.model_info import ModelInfo
from tests.helpers.cli import run_cli
from tests.helpers.model_server import model_server, models
from tests.servers.local_models import LocalServer, llamacpp_app, lmstudio_app, ollama_app

__all__ = ["model_server", "models"]


@pytest.fixture(scope="module")
def local() -> Iterator[tuple[LocalServer, LocalServer, LocalServer]]:
    with (
        LocalServer(ollama_app) as ollama,
        LocalServer(lmstudio_app) as lmstudio,
        LocalServer(llamacpp_app) as llamacpp,
    ):
        yield ollama, lmstudio, llamacpp


async def test_each_servers_own_api_gives_size_context_and_tool_calls(local, models) -> None:
    ollama, lmstudio, llamacpp = local
    found = await detect_local(probes([ollama.port, lmstudio.port, llamacpp.port, models.port]))
    by_port = {f.port: f.details for f in found}
    assert by_port[ollama.port] == (
        ModelInfo("gemma2:2b", 1_629_518_495, 8192, False),
        ModelInfo("qwen3:8b", 5_225_388_164, 40960, True),
    )
    assert "POST /api/show qwen3:8b" in ollama.requests
    # LM Studio: the loaded instance's context; it names tool use, says nothing of a lack
    assert by_port[lmstudio.port] == (
        ModelInfo("qwen2.5-7b-instruct", None, 8192, True),
        ModelInfo("text-embedding-nomic-embed-text-v1.5", None, 2048, None),
    )
    # llama.cpp: the context it runs with (/props n_ctx), not the trained 131,072
    assert by_port[llamacpp.port] == (
        ModelInfo("Llama-3.2-3B-Instruct-Q4_K_M.gguf", 2_019_373_056, 4096, None),
    )
    # a plain OpenAI-compatible server says none of it
    assert all(m.size is m.context_length is m.tools is None for m in by_port[models.port])


@pytest.mark.slow
def test_detect_prints_the_details_and_says_when_a_model_takes_no_tools(
    portico_home: Path, local
) -> None:
    ollama, _lmstudio, llamacpp = local
    out = run_cli(
        portico_home, "model", "detect", "--port", str(ollama.port), "--port", str(llamacpp.port)
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    base = f"http://127.0.0.1:{ollama.port}/v1"
    assert lines[:3] == [
        f"OpenAI-compatible server at {base}: gemma2:2b, qwen3:8b",
        "  gemma2:2b: 1.6 GB · context 8,192 tokens · no tool calls (chat only)",
        "  qwen3:8b: 5.2 GB · context 40,960 tokens · tool calls",
    ]
    assert (
        "  Llama-3.2-3B-Instruct-Q4_K_M.gguf: 2.0 GB · context 4,096 tokens · tool calls: "
        "unknown" in lines
    )
