"""The long chat in the real app: the 2,000-message chat with 500 tool cards of
test_bench_chat_transcript.py, stored in the app's chat database, opened from the chat
list and scrolled to its first message.

- the app's RSS with that chat open (goal <= 200 MiB): what opening (and scrolling) it adds
  to this process's RSS with an empty chat open (the baseline, measured first in the same
  run), added to the RSS of the app run as a person runs it (its own process, settled after
  its start). This process also holds pytest and the test peers (~40 MiB more than the
  app's own process here), so its own total is printed but is not the app's figure;
- opening it in the app (the store's read, the snapshot across the thread hop, the
  transcript's first frame: goal < 1 s), beside opening the empty chat.

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest -s tests/benchmarks/test_bench_chat_memory.py``
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from typing import Any

import psutil
import pytest
from pytestqt.qtbot import QtBot

from portico.chat.messages import Message
from portico.chat.store import ChatStore, StoredConversation
from portico.paths import paths
from tests.benchmarks.test_bench_chat_transcript import CARDS, MESSAGES, conversation
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

__all__ = ["model_server", "models"]

MIB = 1024 * 1024
LONG = "long-chat"
EMPTY = "empty-chat"
SHORT = "short-chat"


def _app_alone(settle: float = 20.0) -> float:
    """RSS of ``portico`` (the app, no arguments) in its own process with a fresh home,
    once its start-up has settled, in MiB."""
    import subprocess
    import tempfile

    home = tempfile.mkdtemp(prefix="portico-rss-")
    env = {**os.environ, "PORTICO_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
    code = "import sys; from portico.cli.main import main; sys.argv = ['portico']; main()"
    app = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        process = psutil.Process(app.pid)
        seen = [0.0]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(settle / 4)
            seen.append(process.memory_info().rss / MIB)
            if len(seen) > 4 and abs(seen[-1] - seen[-2]) < 1 and seen[-1] > 50:
                break
        return seen[-1]
    finally:
        app.kill()
        app.wait(10)


def _rss() -> float:
    gc.collect()
    return psutil.Process(os.getpid()).memory_info().rss / MIB


async def _seed() -> None:
    """The long chat (a chain of messages, as the chat writes them) and an empty one."""
    store = ChatStore(paths().state_dir / "chats.sqlite3")
    chain: list[Message] = []
    parent: str | None = None
    for message in conversation():
        message.parent_id = parent
        parent = message.id
        chain.append(message)
    store.save_conversation(StoredConversation(id=LONG, title="The long chat", leaf_id=parent))
    store.save_many(LONG, chain)
    store.save_conversation(StoredConversation(id=EMPTY, title="An empty chat"))
    store.save_conversation(StoredConversation(id=SHORT, title="A short chat", leaf_id="s2"))
    store.save_many(
        SHORT,
        [
            Message("s1", "user", "Hello?"),
            Message("s2", "assistant", "Hello.", parent_id="s1", model="scripted/gpt-test"),
        ],
    )
    await store.close()


@pytest.mark.timeout(900)
def test_the_long_chat_opens_fast_and_the_app_stays_small(models: Any, qtbot: QtBot) -> None:
    from portico.ui.loop import GIL_SWITCH_INTERVAL, PorticoEventLoop, ensure_application

    sys.setswitchinterval(GIL_SWITCH_INTERVAL)  # as the app's main() does
    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    alone = _app_alone()
    write_config(models, everything=False)
    asyncio.run(_seed())  # on a loop of its own: the app's loop starts with none of its tasks
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        runner.run(_bench(models, alone))


async def _open(desktop: Any, conversation_id: str) -> float:
    """Seconds until the chat is shown and its first frame painted (no nested event
    processing here: that is never done inside a coroutine)."""
    chat = desktop.chat
    started = time.perf_counter()
    await chat.open(conversation_id)
    chat.transcript.repaint()  # the first frame with the newest messages laid out
    return time.perf_counter() - started


async def _bench(models: Any, alone: float) -> None:
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        desktop.window.resize(1200, 800)
        await asyncio.sleep(1.0)  # the start-up's after-paint imports and builds settle
        first = await _open(desktop, SHORT)  # the first chat read from the store
        empty = await _open(desktop, EMPTY)
        await asyncio.sleep(0.5)
        base = _rss()
        opened = await _open(desktop, LONG)
        assert len(chat.transcript.messages) == MESSAGES
        await asyncio.sleep(0.5)
        with_chat = _rss()
        bar = chat.transcript.verticalScrollBar()
        cards: set[str] = set()
        while not (chat.transcript.first == 0 and bar.value() == 0):
            bar.setValue(max(0, bar.value() - 2400))
            await asyncio.sleep(0.005)
            for widget in chat.transcript.widgets.values():
                cards.update(widget.cards)
        await until(lambda: bar.value() == 0, 10, "the top")
        scrolled = _rss()
        again = await _open(desktop, EMPTY)
        await asyncio.sleep(0.5)
        closed = _rss()
    print(
        f"\nin the app: the first stored chat opened (2 messages) {first * 1000:.0f} ms; "
        f"an empty chat {empty * 1000:.0f} ms, the {MESSAGES}-message "
        f"chat with {CARDS} cards {opened * 1000:.0f} ms (goal < 1000; the empty one again "
        f"{again * 1000:.0f} ms)\n"
        f"this process's RSS: empty chat open {base:.0f} MiB; the long chat open "
        f"{with_chat:.0f} MiB (+{with_chat - base:.0f}); scrolled to its first message "
        f"({len(cards)} cards shown on the way) {scrolled:.0f} MiB (+{scrolled - base:.0f}); "
        f"back on the empty chat {closed:.0f} MiB (+{closed - base:.0f})\n"
        f"the app in its own process: {alone:.1f} MiB settled; with the long chat open "
        f"{alone + with_chat - base:.1f} MiB, scrolled through {alone + scrolled - base:.1f} "
        "MiB (goal <= 200)"
    )
    assert len(cards) == CARDS
    assert opened < 1.0
    assert with_chat - base < 40 and scrolled - base < 60  # what the chat itself costs
