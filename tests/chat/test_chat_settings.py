"""A chat's own system prompt and model settings: validated, stored with the chat, and
sent on the wire exactly as each provider's API names them (the scripted model server
records the request bodies the real SDKs send)."""

from __future__ import annotations

import pytest

from portico.chat.settings import ChatSettings, SettingsError, parse
from tests.chat.conftest import chat_setup, collect, provider


async def test_openai_gets_the_chats_prompt_temperature_max_tokens_and_effort(
    models, tmp_path
) -> None:
    spec = provider(models, temperature=0.9, max_tokens=2000)
    store = tmp_path / "chats.db"
    async with chat_setup(providers=(spec,), store_path=store) as s:
        chat = await s.host.new()
        await chat.set_settings(
            ChatSettings(
                system_prompt="Answer in French.",
                temperature=0.2,
                max_tokens=300,
                reasoning_effort="high",
            )
        )
        await collect(chat.send("hello"))
        chat_id = chat.id
    body = models.requests[0].body
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 300
    assert body["reasoning_effort"] == "high"
    assert "thinking" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].endswith("\n\nAnswer in French.")
    assert system["content"].startswith("You are the assistant in Portico")
    # stored with the chat: a resumed chat sends them again
    async with chat_setup(providers=(spec,), store_path=store) as s:
        again = await s.host.open(chat_id)
        assert again.settings.reasoning_effort == "high"
        assert again.settings.system_prompt == "Answer in French."
        await collect(again.send("and now?"))
    body = models.requests[1].body
    assert (body["temperature"], body["max_tokens"], body["reasoning_effort"]) == (0.2, 300, "high")


async def test_without_settings_the_providers_own_are_sent_and_no_effort(models) -> None:
    spec = provider(models, temperature=0.9, max_tokens=2000)
    async with chat_setup(providers=(spec,)) as s:
        chat = await s.host.new()
        await collect(chat.send("hello"))
    body = models.requests[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.9, 2000)
    assert "reasoning_effort" not in body
    assert "Answer in" not in body["messages"][0]["content"]


async def test_anthropic_gets_a_thinking_budget_and_no_temperature(models) -> None:
    spec = provider(models, "claude", kind="anthropic", temperature=0.7, max_tokens=1500)
    async with chat_setup(providers=(spec,)) as s:
        chat = await s.host.new("claude/claude-test")
        await chat.set_settings(
            ChatSettings(system_prompt="Be brief.", thinking_budget=4096, reasoning_effort="low")
        )
        await collect(chat.send("hello"))
    body = models.requests[0].body
    assert models.requests[0].path == "/v1/messages"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    # thinking counts within max_tokens: the answer keeps the provider's 1,500
    assert body["max_tokens"] == 4096 + 1500
    assert "temperature" not in body and "reasoning_effort" not in body
    assert body["system"].endswith("\n\nBe brief.")


async def test_a_branch_keeps_the_settings(models, tmp_path) -> None:
    async with chat_setup(providers=(provider(models),), store_path=tmp_path / "c.db") as s:
        chat = await s.host.new()
        await chat.set_settings(ChatSettings(temperature=1.5))
        await collect(chat.send("one"))
        branched = await s.host.branch(chat)
        assert branched.settings == ChatSettings(temperature=1.5)
        await collect(branched.send("two"))
    assert models.requests[-1].body["temperature"] == 1.5


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"temperature": "3"}, "temperature: must be between 0 and 2, not 3.0"),
        ({"temperature": "warm"}, "temperature: 'warm' is not a number"),
        ({"max_tokens": "0"}, "max tokens: must be a whole number from 1"),
        ({"reasoning_effort": "max"}, "reasoning effort: one of minimal, low, medium, high"),
        ({"thinking_budget": "100"}, "thinking budget: whole tokens, at least 1,024"),
        ({"thinking_budget": "2000", "max_tokens": "1000"}, "must be less than max tokens"),
        ({"thinking_budget": "2000", "temperature": "1"}, "takes no temperature"),
    ],
)
def test_bad_settings_say_which_and_what_it_takes(fields, words) -> None:
    with pytest.raises(SettingsError) as caught:
        parse(**fields)
    assert words in str(caught.value)


def test_an_empty_value_clears_a_setting_and_none_keeps_it() -> None:
    base = parse(system_prompt="x", temperature="0.5", max_tokens="100")
    after = parse(temperature="", base=base)
    assert after == ChatSettings(system_prompt="x", max_tokens=100)
    assert ChatSettings.from_json({"temperature": 9, "max_tokens": 10, "new": 1}) == ChatSettings(
        max_tokens=10
    )


async def test_settings_go_with_their_chat_when_it_is_purged(tmp_path) -> None:
    import sqlite3

    from portico.chat.store import ChatStore, StoredConversation

    store = ChatStore(tmp_path / "c.db")
    store.save_conversation(StoredConversation(id="gone"))
    store.save_conversation(StoredConversation(id="kept"))
    store.save_settings("gone", {"temperature": 1.0})
    store.save_settings("kept", {"temperature": 0.5})
    await store.flush()
    assert (await store.load("gone")).settings == {"temperature": 1.0}
    await store.delete("gone")
    assert await store.purge("gone")
    await store.close()
    with sqlite3.connect(tmp_path / "c.db") as check:
        rows = check.execute("SELECT conversation_id FROM chat_settings").fetchall()
    assert rows == [("kept",)]
