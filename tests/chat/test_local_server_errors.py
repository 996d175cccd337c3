"""Local model servers refuse in their own words, and each refusal is one line saying
what to do, the question kept and a retry answered: Ollama's "does not support tools"
(400) and "not found, try pulling it first" (404), llama-server's "tools param requires
--jinja flag" (a 500 that retrying never fixes), LM Studio's "No models loaded"."""

from __future__ import annotations

import pytest

from portico.chat.events import TurnFailed, TurnFinished
from tests.chat.conftest import chat_setup, collect, everything_spec, needs_npm, provider
from tests.servers.model_server import text

pytestmark = [needs_npm, pytest.mark.slow]

REFUSALS = {
    "ollama_no_tools": (
        "no_tools",
        'does not take tool calls (HTTP 400: "gpt-test" does not support tools)',
        "Pick a model that takes tool calls with /model (`portico model detect` says which",
    ),
    "llamacpp_no_jinja": (
        "no_tools",
        "does not take tool calls (HTTP 500: tools param requires --jinja flag)",
        "Restart llama-server with --jinja",
    ),
    "ollama_not_found": (
        "not_found",
        "the server does not know the model 'gpt-test' (HTTP 404: model \"gpt-test\" not found",
        "Pull it (`ollama pull gpt-test`) or pick one with /model",
    ),
    "lmstudio_not_loaded": (
        "not_found",
        "the server has no model loaded (HTTP 400: No models loaded.",
        "Load 'gpt-test' in the server (LM Studio: its Developer page, or `lms load`)",
    ),
}


@pytest.mark.parametrize("shape", list(REFUSALS))
async def test_a_local_servers_refusal_says_what_to_do(models, shape: str) -> None:
    kind, what, todo = REFUSALS[shape]
    models.script({"local_refusal": shape}, text("Paris."))
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("Capital of France?"))
        failed = run.last
        assert isinstance(failed, TurnFailed) and failed.kind == kind, failed
        assert what in failed.error and todo in failed.error, failed.error
        assert "\n" not in failed.error and "Retry in a moment" not in failed.error
        assert not failed.retryable  # the same request fails the same way until fixed
        assert failed.message_id == chat.messages[-1].id
        assert [m.status for m in chat.messages] == ["complete", "failed"]
        again = await collect(chat.send("/retry"))
        assert isinstance(again.last, TurnFinished) and again.text == "Paris."
    refused = next(r for r in models.requests if r.path.endswith("/chat/completions"))
    assert refused.body.get("tools"), "the refused request carried the tools"
