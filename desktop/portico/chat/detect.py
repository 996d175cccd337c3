"""Finding models: local OpenAI-compatible servers on loopback, a provider's model list,
and a one-completion test. Used by ``portico model detect/test`` and the app's first run.
"""

from __future__ import annotations

from dataclasses import dataclass

from portico.config.model import ProviderSpec

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
        raise NotImplementedError


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
    raise NotImplementedError


async def list_models(spec: ProviderSpec, *, timeout: float = 10.0) -> list[str]:  # noqa: ASYNC109
    """The models the provider's server lists (``GET /models``). Raises ProviderError in
    plain words (bad key, not reachable, not OpenAI-compatible)."""
    raise NotImplementedError


async def test_provider(
    spec: ProviderSpec,
    model: str | None = None,
    *,
    timeout: float = 60.0,  # noqa: ASYNC109
) -> TestReport:
    """One tiny streamed completion. Raises ProviderError in plain words."""
    raise NotImplementedError
