"""A new chat's title is its first words, made here: the model gets no title request
unless ``chat.model_titles`` is on (then it writes one after the first exchange)."""

from __future__ import annotations

import pytest

from portico.chat.events import TitleChanged, TurnFinished
from portico.config.model import Config, ModelsConfig, RuntimeSettings
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import text

pytestmark = pytest.mark.slow  # the scripted model server


def _config(models, on: bool) -> Config:  # type: ignore[no-untyped-def]
    return Config(
        models=ModelsConfig(providers=(provider(models),), default="scripted/gpt-test"),
        settings=RuntimeSettings(chat_model_titles=on),
    )


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_titles_are_local_by_default(models, kind: str) -> None:
    models.script(text("Oslo is rainy today."))
    spec = provider(models, kind=kind)
    config = Config(models=ModelsConfig(providers=(spec,)))
    async with chat_setup(providers=(spec,), config=config) as s:
        chat = await s.host.new()
        run = await collect(chat.send("What is the weather in Oslo today, and tomorrow too?"))
        assert isinstance(run.last, TurnFinished)
        assert [e.title for e in run.of(TitleChanged)] == ["What is the weather in Oslo today,…"]
        assert chat.title == "What is the weather in Oslo today,…"
        assert len(models.requests) == 1  # the answer only: no title request
        assert "Write a title" not in str(models.requests[0].body)


async def test_the_setting_lets_the_model_write_the_title(models) -> None:
    models.script(text("Rainy."), text("Oslo weather"))
    async with chat_setup(providers=(provider(models),), config=_config(models, True)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("Weather in Oslo?"))
        assert [e.title for e in run.of(TitleChanged)] == ["Weather in Oslo?", "Oslo weather"]
        assert "Write a title" in str(models.requests[1].body)
        models.script(text("Rainy still."), text("Sunny."))
        await collect(chat.edit(chat.messages[0].id, "Weather in Oslo now?"))
        assert len(models.requests) == 3 and chat.title == "Oslo weather"  # no second title
        s.host.apply_config(_config(models, False))  # turned off again: the next chat asks none
        other = await s.host.new()
        await collect(other.send("And Bergen?"))
        assert len(models.requests) == 4 and other.title == "And Bergen?"
