"""Finding models: local OpenAI-compatible servers on loopback, a provider's model list,
and a one-completion test. Used by ``portico model detect/test`` and the app's first run.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.chat.model_info import ModelInfo, local_details
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
# Ports to probe instead of KNOWN_PORTS, comma-separated ("11434,8000"): for a server on
# an unusual port, and for tests.
PORTS_ENV = "PORTICO_DETECT_PORTS"

Probe = tuple[int, str, str]  # (port, label, suggested provider name)


def probes(ports: Sequence[int] | None = None) -> tuple[Probe, ...]:
    """What to probe: ``ports`` if given, else the ports in ``$PORTICO_DETECT_PORTS``,
    else KNOWN_PORTS. A port that is not a known one is labelled as a generic server
    and suggested as ``local-PORT``. Raises ValueError naming a bad port."""
    if ports is None:
        raw = os.environ.get(PORTS_ENV, "").strip()
        if not raw:
            return KNOWN_PORTS
        ports = [_port(part, PORTS_ENV) for part in raw.split(",") if part.strip()]
    known = {port: (label, name) for port, label, name in KNOWN_PORTS}
    out: list[Probe] = []
    for port in dict.fromkeys(ports):
        if not 0 < port < 65536:
            raise ValueError(f"{port} is not a port number (1-65535)")
        label, name = known.get(port, ("OpenAI-compatible server", f"local-{port}"))
        out.append((port, label, name))
    return tuple(out)


def _port(text: str, where: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"{where}: {text.strip()!r} is not a port number") from None


def tried(ports: Sequence[Probe]) -> str:
    """``"Ollama 11434, LM Studio 1234"``: what a "nothing found" message names."""
    return ", ".join(f"{label} {port}" for port, label, _name in ports)


@dataclass(frozen=True)
class DetectedServer:
    """A local server that answered ``GET /v1/models`` like an OpenAI-compatible one."""

    label: str  # "Ollama"
    name: str  # the suggested provider name ("ollama")
    base_url: str  # "http://127.0.0.1:11434/v1"
    port: int
    models: tuple[str, ...]
    details: tuple[ModelInfo, ...] = ()  # per model: size, context length, tool calls

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
    ports: Sequence[Probe] | None = None,
    *,
    host: str = "127.0.0.1",
    timeout: float = DETECT_TIMEOUT,  # noqa: ASYNC109 (per probe, passed to httpx2)
) -> list[DetectedServer]:
    """Probe the ports at once (default: :func:`probes`); return the servers that
    answered, in ``ports`` order. Never raises for a closed port, a timeout or a
    non-OpenAI answer."""
    import httpx2

    if ports is None:
        ports = probes()

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
            details = await local_details(client, f"http://{host}:{port}", data)
            return DetectedServer(label, name, base, port, tuple(models), details)

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
