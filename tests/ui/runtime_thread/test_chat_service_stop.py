"""The chat service (the runtime thread's side of the chats place): a Stop that comes
before the turn's task has run still ends the turn for the pane, once; a Stop during the
call ends it the usual way; the chat takes the next turn either way."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from portico.chat.events import ToolCallFinished, ToolCallStarted, TurnFinished
from portico.config.model import TrustLevel
from portico.ui.runtime_thread.chat_service import ChatService, TurnEnded
from tests.chat.conftest import chat_setup
from tests.helpers.person import eventually
from tests.helpers.specs import toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_a_stop_before_the_turn_runs_and_one_during_it() -> None:
    async with chat_setup(toolbox_spec("tb", trust=TrustLevel.FULL)) as s:
        chat = await s.host.new()
        seen: list[Any] = []
        # The session is not used by turns; the prompter is the setup's scripted person.
        service = ChatService(None, s.person, lambda chat_id, event: seen.append(event))  # type: ignore[arg-type]
        service.chats[chat.id] = chat

        service.start_turn(chat.id, "send", "/call tb__hang {}", [])
        turn = service.turns[chat.id]
        assert service.stop(chat.id)  # in the same pass: the turn's task has not run
        assert not service.stop(chat.id)  # and nothing is left to stop
        assert [type(e) for e in seen] == [TurnFinished, TurnEnded]
        assert seen[0].stop_reason == "stopped" and chat.id not in service.turns
        await asyncio.wait([turn], timeout=10)  # the cancelled task has ended
        assert turn.cancelled()
        assert len(seen) == 2  # and said nothing more

        seen.clear()
        service.start_turn(chat.id, "send", "/call tb__hang {}", [])
        await eventually(lambda: any(isinstance(e, ToolCallStarted) for e in seen), what="a call")
        conn = s.hub.connection("tb")
        await eventually(lambda: "hang started" in conn.log.lines, what="hang on the server")
        assert service.stop(chat.id)
        await eventually(lambda: any(isinstance(e, TurnEnded) for e in seen), what="the end")
        finished = [e for e in seen if isinstance(e, ToolCallFinished)]
        assert [f.outcome for f in finished] == ["cancelled"]
        assert [e.stop_reason for e in seen if isinstance(e, TurnFinished)] == ["stopped"]

        seen.clear()
        service.start_turn(chat.id, "send", '/call tb__echo {"text": "again"}', [])
        await eventually(lambda: any(isinstance(e, TurnEnded) for e in seen), what="a turn")
        assert [e.stop_reason for e in seen if isinstance(e, TurnFinished)] == ["direct"]
