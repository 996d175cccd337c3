"""The configured providers, by name; resolves ``"provider/model"`` references and serves
MCP sampling through the ModelProvider port (``portico.model_port``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from portico.chat.providers.errors import ProviderError
from portico.chat.providers.wire import (
    AssistantTurn,
    ModelClient,
    ModelRequest,
    StreamDone,
    Turn,
    UserTurn,
)
from portico.config import secrets
from portico.config.model import ModelsConfig, ProviderSpec
from portico.model_port import Usage
from portico.prompts import SamplingMessage

log = logging.getLogger(__name__)

KeyringLookup = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True)
class ModelChoice:
    """One entry of a model picker."""

    ref: str  # "provider/model"
    provider: str
    model: str
    kind: str  # "openai" | "anthropic"
    vision: bool
    is_default: bool = False


async def _keyring(name: str) -> str | None:
    # Without the process's store (build_services passes its lookup): the keyring alone.
    from portico.auth.secret_store import SecretStore

    return await SecretStore().lookup_secret(name)


def make_client(spec: ProviderSpec, api_key: str | None) -> ModelClient:
    if spec.kind == "anthropic":
        from portico.chat.providers.anthropic_messages import AnthropicClient

        return AnthropicClient(spec, api_key)
    from portico.chat.providers.openai_chat import OpenAIClient

    return OpenAIClient(spec, api_key)


async def resolve_key(spec: ProviderSpec, lookup: KeyringLookup = _keyring) -> str | None:
    """The provider's API key from its reference; ProviderError(kind="config") otherwise."""
    if not spec.api_key:
        return None
    try:
        return await secrets.resolve(
            spec.api_key, lookup_keyring=lookup, where=f"models.providers.{spec.name}.api_key"
        )
    except secrets.SecretError as exc:
        raise ProviderError(str(exc), kind="config") from None


class ModelCatalog:
    def __init__(
        self, config: ModelsConfig | None = None, *, keyring: KeyringLookup = _keyring
    ) -> None:
        self._config = ModelsConfig()
        self._keyring = keyring
        self._clients: dict[str, tuple[ProviderSpec, ModelClient]] = {}
        self._contexts: dict[tuple[str, str, str | None], int | None] = {}
        # what a provider's own context-length error said (it wins: it is what it runs with)
        self._learned: dict[tuple[str, str, str | None], int] = {}
        self.configure(config or ModelsConfig())

    def configure(self, config: ModelsConfig) -> None:
        """Take a reloaded config (clients of unchanged providers are kept)."""
        self._config = config
        for name in list(self._clients):
            spec = config.provider(name)
            kept, _client = self._clients[name]
            if spec is None or _same(spec, kept) is False:
                self._clients.pop(name)  # closed with the catalog's other leftovers

    @property
    def config(self) -> ModelsConfig:
        return self._config

    @property
    def configured(self) -> bool:
        return bool(self._config.providers)

    @property
    def default_ref(self) -> str | None:
        """``"provider/model"`` of the configured default, else the first provider's."""
        if self._config.default:
            try:
                provider, model = self.resolve(self._config.default)
                return f"{provider}/{model}"
            except ProviderError:
                return None
        for spec in self._config.providers:
            if spec.model:
                return f"{spec.name}/{spec.model}"
        return None

    def choices(self) -> list[ModelChoice]:
        default = self.default_ref
        out: list[ModelChoice] = []
        for spec in self._config.providers:
            names = list(spec.models)
            if spec.default_model and spec.default_model not in names:
                names.insert(0, spec.default_model)
            for model in names:
                ref = f"{spec.name}/{model}"
                out.append(
                    ModelChoice(ref, spec.name, model, spec.kind, spec.vision, ref == default)
                )
        return out

    def spec(self, provider: str) -> ProviderSpec:
        spec = self._config.provider(provider)
        if spec is None:
            raise ProviderError(self._unknown(provider), kind="config")
        return spec

    def _unknown(self, ref: str) -> str:
        names = ", ".join(s.name for s in self._config.providers)
        if not names:
            return (
                f"no model is configured (asked for '{ref}'). Add one with "
                "`portico model add NAME --kind openai --base-url URL` (or `portico model "
                "detect` for a local server)."
            )
        return f"no model provider named '{ref}' (configured: {names})."

    def resolve(self, ref: str | None) -> tuple[str, str]:
        """``"P/M"`` / ``"P"`` / a bare model name listed by one provider / None (the
        default) -> ``(provider, model)``. Raises ProviderError(kind="config") naming the
        configured choices."""
        if ref is None:
            default = self._config.default
            if default:
                return self.resolve(default)
            for candidate in self._config.providers:
                if candidate.model:
                    return candidate.name, candidate.model
            raise ProviderError(self._unknown("(default)"), kind="no_model")
        if "/" in ref:
            provider, model = ref.split("/", 1)
            if self._config.provider(provider) is not None and model:
                return provider, model
        spec = self._config.provider(ref)
        if spec is not None:
            if not spec.model:
                raise ProviderError(
                    f"provider '{ref}' names no model: set default_model (or models) in "
                    f"models.providers.{ref}, or pick one as {ref}/MODEL.",
                    kind="config",
                )
            return spec.name, spec.model
        owners = [s for s in self._config.providers if ref in s.models]
        if len(owners) == 1:
            return owners[0].name, ref
        if len(owners) > 1:
            names = ", ".join(f"{s.name}/{ref}" for s in owners)
            raise ProviderError(f"'{ref}' is offered by several providers: {names}.", kind="config")
        raise ProviderError(self._unknown(ref.split("/", 1)[0]), kind="config")

    async def client(self, provider: str) -> ModelClient:
        spec = self.spec(provider)
        held = self._clients.get(provider)
        if held is not None and _same(held[0], spec):
            return held[1]
        key = await resolve_key(spec, self._keyring)
        client = make_client(spec, key)
        self._clients[provider] = (spec, client)
        return client

    async def context_length(self, provider: str, model: str) -> int | None:
        """The model's context: the provider's ``context_length`` if set, else what its
        model info says (asked once per model; a failure counts as unknown)."""
        spec = self.spec(provider)
        key = (provider, model, spec.base_url)
        if key in self._learned:
            return self._learned[key]
        if spec.context_length:
            return spec.context_length
        if key not in self._contexts:
            try:
                client = await self.client(provider)
                self._contexts[key] = await client.context_length(model)
            except Exception as exc:  # a server without model info: unknown, not an error
                log.info("no context length from %s for %s: %s", provider, model, exc)
                self._contexts[key] = None
        return self._contexts[key]

    def learn_context_length(self, provider: str, model: str, tokens: int) -> None:
        """The model's context as its server's context-length error told it (for
        /compact and the meter, until the app restarts)."""
        spec = self.spec(provider)
        self._learned[(provider, model, spec.base_url)] = max(1, tokens)

    async def run(self, provider: str, request: ModelRequest) -> StreamDone:
        """One request, not streamed to anybody: the final part."""
        client = await self.client(provider)
        async for part in client.stream(request):
            if isinstance(part, StreamDone):
                return part
        raise ProviderError(f"'{provider}' ended its answer without finishing it.")

    # --- the ModelProvider port (sampling) ----------------------------------------------
    async def complete(
        self,
        messages: Sequence[SamplingMessage],
        system: str | None,
        model: str | None,
        max_tokens: int,
    ) -> tuple[str, str, Usage]:
        try:
            provider, name = self.resolve(model)
        except ProviderError:
            if model is None or "/" in model:
                raise
            provider, name = self.resolve(None)  # a server's model hint we do not offer
        spec = self.spec(provider)
        turns: list[Turn] = [
            AssistantTurn(m.text) if m.role == "assistant" else UserTurn(m.text) for m in messages
        ]
        request = ModelRequest(
            model=name,
            turns=turns,
            system=system,
            max_tokens=min(max_tokens, spec.max_tokens) if max_tokens else spec.max_tokens,
            temperature=spec.temperature,
        )
        done = await self.run(provider, request)
        return done.text, f"{provider}/{done.model}", Usage(done.input_tokens, done.output_tokens)

    async def aclose(self) -> None:
        clients = [c for _s, c in self._clients.values()]
        self._clients.clear()
        for client in clients:
            await client.aclose()


def _same(a: ProviderSpec, b: ProviderSpec) -> bool:
    return (a.kind, a.base_url, a.api_key, a.headers) == (b.kind, b.base_url, b.api_key, b.headers)
