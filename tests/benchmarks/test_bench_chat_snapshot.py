"""The chat's snapshot for the GUI (``ChatService.snapshot``): its messages were deep
copies each time (~30 ms idle, for the 2,000-message chat with 500 tool cards of
test_bench_chat_transcript.py); now copy-on-write (``chat.message_copies``): a snapshot
copies only what changed since the last one.

Both are measured in the same run on the same chat, opened from a real store: the deep
copy of every message (the baseline) and the copy-on-write snapshot while an answer is
being written (its last message changed since the previous snapshot), as during a turn
each event's snapshot is. The first snapshot of a chat copies every message either way.

Run: ``python -m pytest -s tests/benchmarks/test_bench_chat_snapshot.py``
"""

from __future__ import annotations

import copy
import gc
import os
import statistics
import time

from portico.chat.message_copies import MessageCopies
from portico.chat.store import ChatStore, StoredConversation
from tests.benchmarks.test_bench_chat_transcript import CARDS, MESSAGES, conversation
from tests.chat.conftest import chat_setup

ROUNDS = 7


async def test_snapshot_copies_only_what_changed(tmp_path) -> None:
    path = tmp_path / "chats.sqlite3"
    store = ChatStore(path)
    store.save_conversation(StoredConversation(id="long", title="Long", leaf_id=f"a{MESSAGES - 1}"))
    parent = None
    for message in conversation():
        message.parent_id = parent
        store.save_message("long", message)
        parent = message.id
    await store.close()
    async with chat_setup(store_path=path) as s:
        chat = await s.host.open("long")
        messages = chat.messages
        assert len(messages) == MESSAGES
        assert sum(len(m.tool_calls) for m in messages) == CARDS

        deep: list[float] = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            tuple(copy.deepcopy(m) for m in chat.messages)
            deep.append(time.perf_counter() - start)

        gc.collect()  # the deep copies' garbage is not the next figure's
        copies = MessageCopies()
        start = time.perf_counter()
        first = copies.copies(chat.messages)
        cold = time.perf_counter() - start
        answer = messages[-1]
        warm: list[float] = []
        for i in range(ROUNDS):
            answer.text += f" more {i}"  # the answer being written
            start = time.perf_counter()
            shot = copies.copies(chat.messages)
            warm.append(time.perf_counter() - start)
            assert shot[-1].text == answer.text and shot[-1] is not answer
        assert shot[0] is first[0]  # shared: unchanged since the first snapshot
        assert copies.copied == MESSAGES + ROUNDS
    deep_ms = statistics.median(deep) * 1000
    warm_ms = statistics.median(warm) * 1000
    load = os.getloadavg()
    print(
        f"\nsnapshot of {MESSAGES} messages ({CARDS} tool cards): deep copy {deep_ms:.1f} ms"
        f" (median of {ROUNDS}); copy-on-write {warm_ms:.2f} ms while an answer streams"
        f" ({deep_ms / warm_ms:.0f}x less), {cold * 1000:.1f} ms for a chat's first;"
        f" load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    assert warm_ms * 4 < deep_ms
