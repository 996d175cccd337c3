"""The configured providers, by name; resolves ``"provider/model"`` references and serves
MCP sampling through the ModelProvider port (``portico.model_port``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from portico.config.model import ModelsConfig
from portico.model_port import Usage
from portico.prompts import SamplingMessage


@dataclass(frozen=True)
class ModelChoice:
    """One entry of a model picker."""

    ref: str  # "provider/model"
    provider: str
    model: str
    kind: str  # "openai" | "anthropic"
    vision: bool
    is_default: bool = False


class ModelCatalog:
    def __init__(self, config: ModelsConfig | None = None) -> None:
        raise NotImplementedError

    def configure(self, config: ModelsConfig) -> None:
        """Take a reloaded config (clients of unchanged providers are kept)."""
        raise NotImplementedError

    @property
    def default_ref(self) -> str | None:
        """``"provider/model"`` of the configured default, else the first provider's."""
        raise NotImplementedError

    def choices(self) -> list[ModelChoice]:
        raise NotImplementedError

    def resolve(self, ref: str | None) -> tuple[str, str]:
        """``"P/M"`` / ``"P"`` / a bare model name listed by one provider / None (the
        default) -> ``(provider, model)``. Raises ProviderError(kind="config") naming the
        configured choices."""
        raise NotImplementedError

    async def complete(
        self,
        messages: Sequence[SamplingMessage],
        system: str | None,
        model: str | None,
        max_tokens: int,
    ) -> tuple[str, str, Usage]:
        """The ModelProvider port (sampling): ``model`` is a ``"P/M"`` ref, a model name
        one provider lists, or None for the default."""
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError
