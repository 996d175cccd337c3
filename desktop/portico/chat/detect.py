"""Finding models: local OpenAI-compatible servers on loopback, a provider's model list,
and a one-completion test. Used by ``portico model detect/test`` and the app's first run.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.chat.providers.errors import ProviderError
from portico.config.model import ProviderSpec

if TYPE_CHECKING:
    from portico.chat.providers.catalog import KeyringLookup

# (port, what usually listens there, a provider name to suggest)
KNOWN_PORTS: tuple[tuple[int, str, str], ...] = (
    (11434, "Ollama", "ollama"),
    (1234, "LM Studio", "lmstudio"),
    (8080, "llama.cpp server", "llamacpp"),
)
DETECT_TIMEOUT = 0.5  # seconds per port; all ports are probed at once


@dataclass(frozen=True)
class DetectedServer:
    """A local server that answered ``GET /v1/models`` like an OpenAI-compatible one."""

    label: str  # "Ollama"
    name: str  # the suggested provider name ("ollama")
    base_url: str  # "http://127.0.0.1:11434/v1"
    port: int
    models: tuple[str, ...]

    def as_provider(self) -> ProviderSpec:
        """The provider to add to the config (kind openai, no key)."""
        from portico.config.model import Dialect, Scope, Source

        source = Source(Path("<detected>"), 0, Scope.GLOBAL, Dialect.YAML)
        return ProviderSpec(
            name=self.name,
            source=source,
            kind="openai",
            base_url=self.base_url,
            models=self.models,
            default_model=self.models[0] if self.models else None,
        )


@dataclass(frozen=True)
class TestReport:
    model: str  # the model that answered, as the server named it
    latency: float  # seconds to the complete answer
    first_token: float  # seconds to the first text
    text: str


async def detect_local(
    ports: tuple[tuple[int, str, str], ...] = KNOWN_PORTS,
    *,
    host: str = "127.0.0.1",
    timeout: float = DETECT_TIMEOUT,  # noqa: ASYNC109 (per probe, passed to httpx2)
) -> list[DetectedServer]:
    """Probe the ports at once; return the servers that answered, in ``ports`` order.
    Never raises for a closed port, a timeout or a non-OpenAI answer."""
    import httpx2

    async with httpx2.AsyncClient(timeout=timeout, trust_env=False) as client:

        async def probe(port: int, label: str, name: str) -> DetectedServer | None:
            base = f"http://{host}:{port}/v1"
            try:
                response = await client.get(f"{base}/models")
                data = response.json() if response.status_code == 200 else None
            except (httpx2.HTTPError, ValueError, OSError):
                return None
            models = _model_ids(data)
            if models is None:
                return None
            return DetectedServer(label, name, base, port, tuple(models))

        found = await asyncio.gather(*(probe(*entry) for entry in ports))
    return [f for f in found if f is not None]


def _model_ids(data: Any) -> list[str] | None:
    """The ids of an OpenAI ``/models`` answer, None when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    ids = [m.get("id") for m in data["data"] if isinstance(m, dict)]
    return sorted(str(i) for i in ids if i)


async def list_models(
    spec: ProviderSpec,
    *,
    timeout: float = 10.0,  # noqa: ASYNC109
    lookup: KeyringLookup | None = None,
) -> list[str]:
    """The models the provider's server lists (``GET /models``). Raises ProviderError in
    plain words (bad key, not reachable, not OpenAI-compatible). ``lookup`` as for
    :func:`test_provider`."""
    from portico.chat.providers.catalog import make_client, resolve_key

    key = await (resolve_key(spec) if lookup is None else resolve_key(spec, lookup))
    client = make_client(spec, key)
    try:
        return await asyncio.wait_for(client.list_models(), timeout)
    except TimeoutError:
        raise ProviderError(
            f"'{spec.name}' did not list its models within {timeout:g} s",
            kind="network",
            retryable=True,
        ) from None
    finally:
        await client.aclose()


async def test_provider(
    spec: ProviderSpec,
    model: str | None = None,
    *,
    timeout: float = 60.0,  # noqa: ASYNC109
    lookup: KeyringLookup | None = None,
) -> TestReport:
    """One tiny streamed completion. Raises ProviderError in plain words. ``lookup``
    resolves ``${keyring:NAME}`` (the app passes its secret store's; default: the keyring)."""
    from portico.chat.providers.catalog import make_client, resolve_key
    from portico.chat.providers.wire import ModelRequest, StreamDone, StreamText, UserTurn

    name = model or spec.model
    if not name:
        raise ProviderError(
            f"'{spec.name}' names no model: pass --model NAME or set default_model",
            kind="config",
        )
    key = await (resolve_key(spec) if lookup is None else resolve_key(spec, lookup))
    client = make_client(spec, key)
    request = ModelRequest(
        model=name, turns=[UserTurn("Reply with the single word: ready")], max_tokens=16
    )
    started = time.monotonic()
    first: float | None = None
    try:
        async with asyncio.timeout(timeout):
            async for part in client.stream(request):
                if isinstance(part, StreamText) and first is None:
                    first = time.monotonic() - started
                elif isinstance(part, StreamDone):
                    total = time.monotonic() - started
                    return TestReport(part.model, total, first or total, part.text.strip())
    except TimeoutError:
        raise ProviderError(
            f"'{spec.name}/{name}' did not answer within {timeout:g} s",
            kind="network",
            retryable=True,
        ) from None
    finally:
        await client.aclose()
    raise ProviderError(f"'{spec.name}/{name}' ended its answer without finishing it")
