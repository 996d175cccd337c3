"""A summary never drops messages silently: when the oldest of the messages to leave out
do not fit the summary request, /compact summarise does nothing and says so, naming the
two ways on (summarise the newest and send the oldest not at all, or trim all); the
person's choice runs, and the chat keeps a line saying what each kind of message became."""

from __future__ import annotations

import pytest

from portico.chat.events import Notice, TurnFailed, TurnFinished
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import text

pytestmark = pytest.mark.slow  # the scripted model server

OLDEST = "alpha " * 3334  # ~5,000 tokens
OLDER = "bravo " * 3334  # ~5,000


async def test_a_summary_that_cannot_hold_the_oldest_asks_first(models, tmp_path) -> None:
    models.script(
        text("Noted."),
        text("Noted again."),
        {"context_too_long": {"tokens": 10_200, "limit": 8_000}},
        text("SUMMARY: bravo words."),
        text("Answered."),
    )
    spec = provider(models, max_tokens=200)
    store = tmp_path / "c.db"
    async with chat_setup(providers=(spec,), store_path=store) as s:
        chat = await s.host.new()
        await collect(chat.send(OLDEST))
        await collect(chat.send(OLDER))
        assert (await collect(chat.send("What now?"))).of(TurnFailed)[0].kind == "context"
        asked = len(models.requests)
        refused = await collect(chat.send("/compact summarise"))
        [why] = refused.of(TurnFailed)
        assert "the oldest 2 messages of the 4 to leave out are too long" in why.error
        assert "/compact summarise-recent" in why.error and "/compact trim" in why.error
        assert len(models.requests) == asked and chat.left_out == 0  # nothing was done
        done = await collect(chat.send("/compact summarise-recent"))
        [notice] = done.of(Notice)
        assert notice.text.startswith("4 older messages left out of what is sent")
        assert "the oldest 2 were too long to summarise and are not sent at all" in notice.text
        summary_request = str(models.requests[-1].body["messages"])
        assert "bravo bravo" in summary_request and "alpha alpha" not in summary_request
        retried = await collect(chat.retry())
        assert isinstance(retried.last, TurnFinished) and retried.text == "Answered."
        cut, line = chat.context_cut
        assert cut == chat.messages[4].id and chat.messages[4].text == "What now?"
        assert line.startswith("4 messages above go to the model as a summary")
        assert "the oldest 2 were too long to summarise and are not sent at all" in line
        chat_id = chat.id
    async with chat_setup(providers=(spec,), store_path=store) as s:
        again = await s.host.open(chat_id)
        assert again.context_cut == (cut, line)  # the line comes back with the chat


async def test_trim_says_so_at_the_cut(models) -> None:
    models.state.contexts = {"gpt-test": 8000}
    models.script(text("Noted."), text("Short."))
    async with chat_setup(providers=(provider(models, max_tokens=200),)) as s:
        chat = await s.host.new()
        await collect(chat.send(OLDEST))
        await collect(chat.send("Short?"))
        assert chat.context_cut is None
        assert not (await collect(chat.send("/compact trim"))).of(TurnFailed)
        assert chat.context_cut == (
            chat.messages[2].id,
            "2 messages above are not sent to the model (/compact trim). They stay in this chat.",
        )
