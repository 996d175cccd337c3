"""Small HTTP servers on 127.0.0.1 that answer as Ollama, LM Studio and llama.cpp's server
do, in those APIs' real shapes (fields as their servers send them, unused ones included),
for ``portico model detect``'s details."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

GB = 1_000_000_000


def ollama_app(requests: list[str]) -> Starlette:
    tags = {
        "models": [
            {
                "name": "qwen3:8b",
                "model": "qwen3:8b",
                "modified_at": "2026-05-01T10:00:00.000000+02:00",
                "size": 5_225_388_164,
                "digest": "500a1f067a9f782620b40bee6f7b0c89e17ae61f686b92c24933e4ca4b2b8b41",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "qwen3",
                    "families": ["qwen3"],
                    "parameter_size": "8.2B",
                    "quantization_level": "Q4_K_M",
                },
            },
            {
                "name": "gemma2:2b",
                "model": "gemma2:2b",
                "modified_at": "2026-04-01T10:00:00.000000+02:00",
                "size": 1_629_518_495,
                "digest": "8ccf136fdd5298f3ffe2d69862750ea7fb56555fa4d5b18c04e3fa4d82ee09d7",
                "details": {
                    "format": "gguf",
                    "family": "gemma2",
                    "parameter_size": "2.6B",
                    "quantization_level": "Q4_0",
                },
            },
        ]
    }
    shows = {
        "qwen3:8b": {
            "modelfile": "FROM qwen3:8b",
            "parameters": "temperature 0.6",
            "template": "{{ .Prompt }}",
            "details": tags["models"][0]["details"],
            "model_info": {
                "general.architecture": "qwen3",
                "general.parameter_count": 8190735360,
                "qwen3.block_count": 36,
                "qwen3.context_length": 40960,
            },
            "capabilities": ["completion", "tools", "thinking"],
            "modified_at": "2026-05-01T10:00:00.000000+02:00",
        },
        "gemma2:2b": {
            "modelfile": "FROM gemma2:2b",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": tags["models"][1]["details"],
            "model_info": {"general.architecture": "gemma2", "gemma2.context_length": 8192},
            "capabilities": ["completion"],
        },
    }

    async def models(request: Request) -> Response:
        requests.append("GET /v1/models")
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": m["name"],
                        "object": "model",
                        "created": 1746000000,
                        "owned_by": "library",
                    }
                    for m in tags["models"]
                ],
            }
        )

    async def api_tags(request: Request) -> Response:
        requests.append("GET /api/tags")
        return JSONResponse(tags)

    async def api_show(request: Request) -> Response:
        body = await request.json()
        requests.append(f"POST /api/show {body.get('model')}")
        shown = shows.get(body.get("model") or body.get("name"))
        if shown is None:
            return JSONResponse({"error": f"model '{body.get('model')}' not found"}, 404)
        return JSONResponse(shown)

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/api/tags", api_tags),
            Route("/api/show", api_show, methods=["POST"]),
        ]
    )


def lmstudio_app(requests: list[str]) -> Starlette:
    listed = [
        {
            "id": "qwen2.5-7b-instruct",
            "object": "model",
            "type": "llm",
            "publisher": "lmstudio-community",
            "arch": "qwen2",
            "compatibility_type": "gguf",
            "quantization": "Q4_K_M",
            "state": "loaded",
            "max_context_length": 32768,
            "loaded_context_length": 8192,
            "capabilities": ["tool_use"],
        },
        {
            "id": "text-embedding-nomic-embed-text-v1.5",
            "object": "model",
            "type": "embeddings",
            "publisher": "nomic-ai",
            "arch": "nomic-bert",
            "compatibility_type": "gguf",
            "quantization": "Q4_K_M",
            "state": "not-loaded",
            "max_context_length": 2048,
        },
    ]

    async def models(request: Request) -> Response:
        requests.append("GET /v1/models")
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": m["id"], "object": "model", "owned_by": "organization_owner"}
                    for m in listed
                ],
            }
        )

    async def v0(request: Request) -> Response:
        requests.append("GET /api/v0/models")
        return JSONResponse({"object": "list", "data": listed})

    async def nothing(request: Request) -> Response:
        requests.append(f"{request.method} {request.url.path}")
        return JSONResponse({"error": "Unexpected endpoint or method."}, 404)

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/api/v0/models", v0),
            Route("/api/tags", nothing),
            Route("/api/show", nothing, methods=["POST"]),
        ]
    )


def llamacpp_app(requests: list[str]) -> Starlette:
    async def models(request: Request) -> Response:
        requests.append("GET /v1/models")
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
                        "object": "model",
                        "created": 1746000000,
                        "owned_by": "llamacpp",
                        "meta": {
                            "vocab_type": 2,
                            "n_vocab": 128256,
                            "n_ctx_train": 131072,
                            "n_embd": 3072,
                            "n_params": 3212749888,
                            "size": 2019373056,
                        },
                    }
                ],
            }
        )

    async def props(request: Request) -> Response:
        requests.append("GET /props")
        return JSONResponse(
            {
                "default_generation_settings": {
                    "id": 0,
                    "id_task": -1,
                    "n_ctx": 4096,
                    "speculative": False,
                    "is_processing": False,
                    "params": {"n_predict": -1, "temperature": 0.8},
                },
                "total_slots": 1,
                "model_path": "/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
                "chat_template": "{{ bos_token }}",
                "build_info": "b5000-abc",
            }
        )

    return Starlette(routes=[Route("/v1/models", models), Route("/props", props)])


class LocalServer:
    """One of the apps above on a free loopback port, on a thread of its own."""

    def __init__(self, make: Any) -> None:
        self.requests: list[str] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(
            make(self.requests), log_level="warning", lifespan="off", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name="local-model-server",
            daemon=True,
        )

    def __enter__(self) -> LocalServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the local model server did not start within 10 s")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)
