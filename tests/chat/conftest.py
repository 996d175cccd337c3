"""Chat test helpers: the scripted model server, server-everything, a host over a hub."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from portico.chat.events import Event, TextDelta
from portico.chat.host import ChatHost
from portico.chat.providers.catalog import ModelCatalog
from portico.config.model import (
    Config,
    Dialect,
    ModelsConfig,
    Protocol,
    ProviderSpec,
    RuntimeSettings,
    Scope,
    ServerSpec,
    Source,
)
from portico.policy.setup import Policy
from portico.prompts import Prompter
from portico.runtime.hub import Hub
from tests.helpers.model_server import model_server, models
from tests.helpers.person import ScriptedPerson
from tests.helpers.servers import EVERYTHING, NODE
from tests.helpers.specs import spec_for
from tests.servers.model_server import ModelServer

__all__ = ["ModelServer", "model_server", "models"]

needs_npm = pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed")


def provider(
    server: ModelServer, name: str = "scripted", kind: str = "openai", **fields: Any
) -> ProviderSpec:
    url = server.openai_url if kind == "openai" else server.anthropic_url
    source = Source(Path("/global/config.yaml"), 3, Scope.GLOBAL, Dialect.YAML)
    fields.setdefault("models", ("gpt-test",) if kind == "openai" else ("claude-test",))
    return ProviderSpec(name=name, source=source, kind=kind, base_url=url, **fields)  # type: ignore[arg-type]


def in_background(events: AsyncIterator[Event]) -> tuple[asyncio.Task[None], list[Event]]:
    """A turn's events consumed by a task of their own; the list fills as they come."""
    seen: list[Event] = []

    async def consume() -> None:
        async for event in events:
            seen.append(event)

    return asyncio.ensure_future(consume()), seen


def everything_spec(name: str = "everything", **fields: Any) -> ServerSpec:
    fields.setdefault("connect_timeout", 30.0)
    fields.setdefault("protocol", Protocol.LEGACY)
    return spec_for(name, command=str(NODE), args=(str(EVERYTHING), "stdio"), **fields)


@dataclass
class Setup:
    hub: Hub
    host: ChatHost
    policy: Policy
    person: Any


@asynccontextmanager
async def chat_setup(
    *specs: ServerSpec,
    providers: tuple[ProviderSpec, ...] = (),
    prompter: Prompter | None = None,
    store_path: Path | None = None,
    **host_options: Any,
) -> AsyncIterator[Setup]:
    person = prompter or ScriptedPerson()
    catalog = ModelCatalog(ModelsConfig(providers=providers))
    policy = Policy(person, provider=catalog)  # type: ignore[arg-type]
    if "config" not in host_options:  # with a config: its chat.model_titles decides
        host_options.setdefault("model_titles", False)
    async with Hub(hooks=policy.hooks()) as hub:
        await hub.apply(Config(servers=specs, settings=RuntimeSettings()))
        guard = policy.guard(
            hub.registry,
            approvals_off=lambda: hub.settings.approvals_mode == "off",
            yolo=host_options.pop("yolo", False),
            question_timeout=host_options.pop("question_timeout", None),
        )
        host = ChatHost(
            hub,
            guard,
            person,
            models=catalog,
            store_path=store_path,
            **host_options,  # type: ignore[arg-type]
        )
        try:
            yield Setup(hub, host, policy, person)
        finally:
            await host.close()
            await catalog.aclose()


@dataclass
class Run:
    events: list[Event] = field(default_factory=list)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.of(TextDelta))

    @property
    def last(self) -> Event:
        return self.events[-1]


async def collect(turn: AsyncIterator[Event]) -> Run:
    run = Run()
    async for event in turn:
        run.events.append(event)
    return run
