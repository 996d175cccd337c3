"""First run, Connect a model: a detected local server or an OpenAI-compatible URL ends in
a model that answered, written to the config (the key in the keychain), and a chat that
uses it, without the config editor."""

from __future__ import annotations

import asyncio
import socket

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.auth.secret_store import SecretStore
from portico.config import load
from portico.paths import paths
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from tests.servers.model_server import ModelServer, text
from tests.ui.chat_helpers import memory_keyring, model_server, models
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # real servers, processes or the app

__all__ = ["memory_keyring", "model_server", "models"]
OLLAMA_PORT = 11434


async def _welcome(desktop: DesktopApp) -> asyncio.Future[int]:
    run = asyncio.ensure_future(desktop.run())
    welcome = desktop.onboarding.welcome
    await until(lambda: desktop.window.chats.pane.stack.currentWidget() is welcome, 60, "welcome")
    return run


async def _chat_answers(desktop: DesktopApp, qtbot: QtBot, expected: str) -> None:
    chat = desktop.chat
    await until(lambda: chat.current is not None, 30, "a chat")
    await until(lambda: chat.pane.stack.currentWidget() is chat.transcript, 10, "the chat view")
    qtbot.keyClicks(chat.composer.input, "hello")
    qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)

    def answered() -> bool:
        messages = chat.transcript.messages
        widget = chat.transcript.widgets.get(messages[-1].id) if messages else None
        return widget is not None and expected in widget.plain_text()

    await until(answered, 30, "the model's answer in the chat")


async def test_openai_compatible_url_and_key(models, qtbot: QtBot, memory_keyring) -> None:  # type: ignore[no-untyped-def]
    models.script(text("pong"), text("Hi there from the model."))
    desktop = DesktopApp(ensure_application())
    run = await _welcome(desktop)
    try:
        desktop.onboarding.welcome.model_button.click()
        flow = await until(lambda: desktop.onboarding.flows and desktop.onboarding.flows[0])
        qtbot.keyClicks(flow.openai_url, models.openai_url)
        qtbot.keyClicks(flow.openai_key, "sk-test-123")
        qtbot.keyClicks(flow.openai_model, "gpt-test")
        flow.openai_button.click()
        await until(lambda: flow.chat_button.isVisible(), 30, "the model to answer the test")
        assert "answered “pong”" in flow.status.text()
        spec = load(None).models.providers[0]
        assert spec.base_url == models.openai_url and spec.models[0] == "gpt-test"
        assert spec.api_key is not None and spec.api_key.startswith("${keyring:")
        assert "sk-test-123" not in paths().global_toml.read_text()  # only the reference
        assert (
            await SecretStore().lookup_secret(spec.api_key[len("${keyring:") : -1]) == "sk-test-123"
        )
        assert models.requests[0].headers.get("authorization") == "Bearer sk-test-123"
        flow.chat_button.click()
        await _chat_answers(desktop, qtbot, "Hi there from the model.")
        assert desktop.chat.composer.current_model() == f"{spec.name}/gpt-test"
        assert desktop.editor is None
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.skipif(not _port_free(OLLAMA_PORT), reason="port 11434 is taken on this machine")
async def test_a_detected_local_server_comes_first(qtbot: QtBot) -> None:
    with ModelServer(port=OLLAMA_PORT) as local:
        local.set_models(["llama-test", "qwen-test"])
        local.script(text("pong"), text("Local hello."))
        desktop = DesktopApp(ensure_application())
        run = await _welcome(desktop)
        try:
            desktop.onboarding.welcome.model_button.click()
            flow = await until(lambda: desktop.onboarding.flows and desktop.onboarding.flows[0])
            await until(lambda: flow.local_buttons, 20, "the detected server")
            assert flow.local_buttons[0].accessibleName() == "Use Ollama"
            assert [flow.local_models[0].itemText(i) for i in range(2)] == [
                "llama-test",
                "qwen-test",
            ]
            flow.local_buttons[0].click()
            await until(lambda: flow.chat_button.isVisible(), 30, "the local model to answer")
            spec = load(None).models.providers[0]
            assert spec.name == "ollama" and spec.api_key is None
            flow.chat_button.click()
            await _chat_answers(desktop, qtbot, "Local hello.")
        finally:
            desktop.request_quit()
            assert await asyncio.wait_for(run, 60) == 0
