"""A context that fits: the context length comes from the provider's model info, a
request that would not fit is refused before it is sent with both ways out named, and
``/compact trim`` / ``/compact summarise`` (the person's say) leave older messages out of
what is sent while the chat and its store keep them."""

from __future__ import annotations

from portico.chat.compact import SUMMARY_ASK, SUMMARY_SYSTEM
from portico.chat.events import Notice, TurnFailed, TurnFinished
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import text

BIG = "alpha " * 3334  # ~5,000 tokens at 4 characters a token
MORE = "bravo " * 1934  # ~2,900


async def test_the_context_length_comes_from_the_providers_model_info(models) -> None:
    models.state.contexts = {"gpt-test": 32768, "claude-test": 200000}
    claude = provider(models, "claude", kind="anthropic")
    fixed = provider(models, "fixed", context_length=4096)
    async with chat_setup(providers=(provider(models), claude, fixed)) as s:
        chat = await s.host.new("scripted/gpt-test")
        assert (await chat.context_estimate()).context_length == 32768
        await chat.set_model("claude/claude-test")
        assert (await chat.context_estimate()).context_length == 200000
        await chat.set_model("fixed/gpt-test")  # the provider's own setting wins
        assert (await chat.context_estimate()).context_length == 4096
        await chat.context_estimate()
    asked = [r.path for r in models.state.requests]
    assert asked.count("/v1/models") == 1  # asked once, then remembered
    assert asked.count("/v1/models/claude-test") == 1


async def test_a_request_that_does_not_fit_is_refused_then_trimmed_with_the_persons_say(
    models, tmp_path
) -> None:
    models.state.contexts = {"gpt-test": 8000}
    models.script(text("Noted."), text("Answered."))
    spec = provider(models, max_tokens=200)
    store = tmp_path / "c.db"
    async with chat_setup(providers=(spec,), store_path=store) as s:
        chat = await s.host.new()
        await collect(chat.send(BIG))
        run = await collect(chat.send(MORE))
        [failed] = run.of(TurnFailed)
        assert failed.kind == "context" and not failed.retryable
        assert "does not fit scripted/gpt-test's context (8,000 tokens)" in failed.error
        assert "/compact summarise" in failed.error and "/compact trim" in failed.error
        assert len(models.requests) == 1  # nothing was sent for it
        done = await collect(chat.send("/compact trim"))
        [notice] = done.of(Notice)
        assert notice.text.startswith("2 older messages left out of what is sent")
        assert "they stay in this chat" in notice.text
        assert chat.left_out == 2
        retried = await collect(chat.retry())
        assert isinstance(retried.last, TurnFinished) and retried.text == "Answered."
        chat_id = chat.id
    sent = models.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"] == MORE
    async with chat_setup(providers=(spec,), store_path=store) as s:
        again = await s.host.open(chat_id)
        assert [m.text for m in again.messages] == [BIG, "Noted.", MORE, "Answered."]
        assert again.left_out == 2  # the cut is stored with the chat


async def test_summarise_asks_the_model_and_sends_the_summary_instead(models, tmp_path) -> None:
    models.state.contexts = {"gpt-test": 8000}
    models.script(
        text("Noted."), text("SUMMARY: the person pasted alpha words."), text("Answered.")
    )
    spec = provider(models, max_tokens=200)
    async with chat_setup(providers=(spec,), store_path=tmp_path / "c.db") as s:
        chat = await s.host.new()
        await collect(chat.send(BIG))
        assert (await collect(chat.send(MORE))).of(TurnFailed)[0].kind == "context"
        done = await collect(chat.send("/compact summarise"))
        assert "a summary the model wrote goes instead" in done.of(Notice)[0].text
        await collect(chat.retry())
        assert [m.text for m in chat.messages] == [BIG, "Noted.", MORE, "Answered."]
    summary_request = models.requests[1].body
    assert summary_request["messages"][0] == {"role": "system", "content": SUMMARY_SYSTEM}
    assert summary_request["messages"][1]["content"] == BIG
    assert summary_request["messages"][-1] == {"role": "user", "content": SUMMARY_ASK}
    assert "tools" not in summary_request
    answer = models.requests[2].body["messages"]
    assert [m["role"] for m in answer] == ["system", "user"] and answer[1]["content"] == MORE
    assert answer[0]["content"].endswith("SUMMARY: the person pasted alpha words.")
    assert "written by a model when the person asked for it" in answer[0]["content"]


async def test_compact_says_why_it_cannot(models) -> None:
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        await collect(chat.send("hi"))
        run = await collect(chat.send("/compact trim"))
        assert "the context length of scripted/gpt-test is not known" in run.of(TurnFailed)[0].error
        models.state.contexts = {"gpt-test": 8000}
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        await collect(chat.send("hi"))
        run = await collect(chat.send("/compact squeeze"))
        assert run.of(TurnFailed)[0].error == "/compact takes summarise or trim"
        run = await collect(chat.send("/compact trim"))
        assert "nothing can be left out" in run.of(TurnFailed)[0].error
