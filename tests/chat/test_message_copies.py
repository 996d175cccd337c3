"""Copy-on-write snapshots of a chat's messages (``chat.message_copies``, what
``ChatService.snapshot`` hands the GUI): a message unchanged since the last snapshot
shares its copy, any change to any field is copied again, and during a real turn (the
scripted model server, a tool call through the toolbox) every snapshot equals the core's
messages as they are then."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from portico.chat.events import TurnFinished
from portico.chat.message_copies import STAMPED, MessageCopies
from portico.chat.messages import Attachment, Message, Round, ToolCall
from tests.chat.conftest import chat_setup, provider
from tests.helpers.specs import toolbox_spec


def test_the_stamp_covers_every_field() -> None:
    for kind, names in STAMPED.items():
        assert tuple(f.name for f in dataclasses.fields(kind)) == names, kind.__name__


def _answer() -> Message:
    call = ToolCall("c1", "toolbox__add", {"a": 1}, "", "ok", "two", (), False, 0.1)
    return Message(
        "a1",
        "assistant",
        "Adding.",
        parent_id="u1",
        created=1.0,  # each answer alike, to compare with the copy of an earlier one
        tool_calls=[call],
        rounds=[Round("Adding.", ["c1"], "think")],
    )


CHANGES: dict[str, Callable[[Message], object]] = {
    "text grows": lambda m: setattr(m, "text", m.text + " more"),
    "text, same length": lambda m: setattr(m, "text", "Adders."),
    "status": lambda m: setattr(m, "status", "failed"),
    "error": lambda m: setattr(m, "error", "boom"),
    "tokens": lambda m: setattr(m, "output_tokens", 7),
    "model": lambda m: setattr(m, "model", "p/other"),
    "a call's outcome": lambda m: setattr(m.tool_calls[0], "outcome", "cancelled"),
    "a call's result, same length": lambda m: setattr(m.tool_calls[0], "result_text", "one"),
    "a call's images": lambda m: setattr(m.tool_calls[0], "result_images", (Path("/i.png"),)),
    "a call's view": lambda m: setattr(m.tool_calls[0], "view_uri", "ui://x"),
    "a new call": lambda m: m.tool_calls.append(ToolCall("c2", "toolbox__add")),
    "a new round": lambda m: m.rounds.append(Round("It is 2.")),
    "a round's thinking": lambda m: setattr(m.rounds[0], "thinking", "thunk"),
    "a round's calls": lambda m: m.rounds[0].tool_call_ids.append("c2"),
    "an attachment": lambda m: m.attachments.append(Attachment("file", "a.txt")),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_is_copied_again_and_the_rest_shared(change: str) -> None:
    question = Message("u1", "user", "1 + 1?")
    answer = _answer()
    copies = MessageCopies()
    first = copies.copies([question, answer])
    assert first == (question, answer) and first[1] is not answer
    again = copies.copies([question, answer])
    assert again[0] is first[0] and again[1] is first[1]  # nothing changed: shared
    CHANGES[change](answer)
    after = copies.copies([question, answer])
    assert after[1] == answer and after[1] is not first[1], change
    assert first[1] == _answer()  # the earlier snapshot's copy is as it was
    assert after[0] is first[0]


@pytest.mark.slow
async def test_every_snapshot_of_a_real_turn_equals_the_core(models) -> None:
    models.script(
        {
            "text": "Adding.",
            "tool_calls": [{"name": "toolbox__add", "arguments": {"a": 2, "b": 40}}],
            "reasoning": "a sum",
        },
        {"text": "It is 42 and that is the answer.", "reasoning": "say it"},
    )
    async with chat_setup(toolbox_spec(), providers=(provider(models, "m"),)) as s:
        chat = await s.host.new("m/gpt-test")
        copies = MessageCopies()
        shots = 0
        async for event in chat.send("2 + 40?"):
            snapshot = copies.copies(chat.messages)
            assert snapshot == tuple(chat.messages), type(event).__name__
            assert all(a is not b for a, b in zip(snapshot, chat.messages, strict=True))
            shots += 1
        assert isinstance(event, TurnFinished)
        final = copies.copies(chat.messages)
        assert final == tuple(chat.messages) and final[0] is snapshot[0]
    assert copies.copied < shots * 2  # the question was copied once, not per event
