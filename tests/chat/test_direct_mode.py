"""Direct mode: with no model at all, prompts render, tool calls run and resources attach."""

from __future__ import annotations

import pytest

from portico.chat.events import (
    AttachmentAdded,
    ConversationChanged,
    Notice,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    UserMessageAdded,
    YoloChanged,
)
from tests.chat.conftest import chat_setup, collect, everything_spec, needs_npm

pytestmark = [needs_npm, pytest.mark.slow]


async def test_direct_mode_without_any_provider() -> None:
    async with chat_setup(everything_spec()) as s:
        chat = await s.host.new()
        assert chat.model is None

        simple = await collect(chat.send("/everything:simple-prompt"))
        [added] = simple.of(UserMessageAdded)
        assert "simple prompt" in added.text.lower()
        assert simple.last == TurnFinished(added.message_id, "direct")

        positional = await collect(chat.send('/everything:args-prompt "New York" NY'))
        assert "What's weather in New York, NY?" in positional.of(UserMessageAdded)[0].text
        named = await collect(chat.send("/everything:args-prompt city=Oslo"))
        assert "What's weather in Oslo?" in named.of(UserMessageAdded)[0].text

        missing = await collect(chat.send("/everything:args-prompt"))
        assert isinstance(missing.last, TurnFailed) and missing.last.kind == "command"
        assert "usage: /everything:args-prompt CITY [STATE]" in missing.last.error

        call = await collect(chat.send('/call everything__get-sum {"a": 2, "b": 40}'))
        [started] = call.of(ToolCallStarted)
        assert (started.server, started.tool) == ("everything", "get-sum")
        [finished] = call.of(ToolCallFinished)
        assert finished.ok and "42" in finished.result.text()
        assert call.last.stop_reason == "direct"

        uri = "demo://resource/static/document/architecture.md"
        attach = await collect(chat.send(f"read this @everything:{uri}"))
        [attached] = attach.of(AttachmentAdded)
        assert attached.uri == uri and attached.size > 100
        message = chat.messages[-1]
        assert message.role == "user" and message.text == "read this"
        assert message.attachments[0].text and "Architecture" in message.attachments[0].text

        plain = await collect(chat.send("hello?"))
        assert isinstance(plain.last, TurnFailed) and plain.last.kind == "no_model"
        assert "portico model add" in plain.last.error

        # everything is in the store, in order
        stored = await s.host.store.load(chat.id)
        assert len([m for m in stored.messages if m.role == "user"]) == 6
        assert stored.title  # the first words


async def test_builtins_help_yolo_new_branch_and_bad_commands() -> None:
    async with chat_setup(everything_spec()) as s:
        chat = await s.host.new()
        helped = await collect(chat.send("/help"))
        assert "/call server__tool" in helped.of(Notice)[0].text
        yolo = await collect(chat.send("/yolo"))
        assert yolo.of(YoloChanged) == [YoloChanged(True)] and chat.context.yolo
        await collect(chat.send('/call everything__get-sum {"a": 1, "b": 1}'))
        branched = await collect(chat.send("/branch"))
        [changed] = branched.of(ConversationChanged)
        assert changed.reason == "branch" and changed.parent_id == chat.id
        branch = await s.host.open(changed.conversation_id)
        assert [m.text for m in branch.messages] == [m.text for m in chat.messages]
        assert branch.context.spend is chat.context.spend
        fresh = await collect(chat.send("/new"))
        new = await s.host.open(fresh.of(ConversationChanged)[0].conversation_id)
        assert new.messages == [] and new.id != chat.id
        unknown = await collect(chat.send("/nope"))
        assert unknown.last.kind == "command" and "/help" in unknown.last.error
        bad_json = await collect(chat.send("/call everything__get-sum {oops"))
        assert "not valid JSON" in bad_json.last.error
        no_server = await collect(chat.send("/ghost:prompt"))
        assert "no server named 'ghost'" in no_server.last.error
        model = await collect(chat.send("/model"))
        assert "No model is configured" in model.of(Notice)[0].text
        assert chat.completions("/every")[:2] == [
            "/everything:args-prompt",
            "/everything:completable-prompt",
        ]
