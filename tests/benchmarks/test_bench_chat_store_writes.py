"""The chat store's writer-thread CPU per ``/call``: schema v3 (the batch keeps the
full-text index in bulk) vs the v2 per-row FTS triggers, in the same run.

Each ``/call`` writes what ``Chat._direct_call`` makes the store write: the user message
(``/call tb__echo {...}``), the assistant message with its tool call and round (saved at
the start, again when the call ends), and the conversation row. A batch carries
``CALLS_PER_BATCH`` calls (a /call takes a few ms; a batch waits WRITE_DELAY = 0.1 s). Both
stores are real files in WAL mode driven by the real store code; the baseline is the
same store with v2's ``messages_ai``/``messages_au`` triggers put back and the plain
batch writer (no bulk indexing), which is what v2 ran. CPU is the writer thread's own
(``time.thread_time()`` read on that thread), so the load of other programs does not
count; the two variants alternate block by block, min and median over the blocks.

Run: ``python -m pytest tests/benchmarks/test_bench_chat_store_writes.py -s``
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import statistics
import time
from pathlib import Path

from portico.chat import schema
from portico.chat.messages import Message, Round, ToolCall
from portico.chat.pending_writes import PendingWrites
from portico.chat.store import _UPSERTS, ChatStore, StoredConversation

BLOCKS = 30
CALLS_PER_BATCH = 20
COPY = 2000
STREAM_FLUSHES = 40
_ids = itertools.count()


def _v2_triggers() -> list[str]:
    return [
        s
        for s in schema._statements(schema.MIGRATIONS[1])
        if "messages_a" in s and s.startswith("CREATE TRIGGER") and "messages_ad" not in s
    ]


async def _baseline(path: Path) -> ChatStore:
    """The v2 writer: per-row insert/update triggers, the batch writes rows only."""
    store = ChatStore(path, write_delay=600)
    await store.read(lambda conn: [conn.execute(s) for s in _v2_triggers()])
    store._writes = PendingWrites(_UPSERTS, store._submit, 600)  # v2's batch writer
    return store


def _one_call(store: ChatStore, conversation: StoredConversation, leaf: str | None) -> str:
    n = next(_ids)
    user = Message(f"u{n}", "user", '/call tb__echo {"text": "hello"}', parent_id=leaf)
    store.save_message(conversation.id, user)
    assistant = Message(f"a{n}", "assistant", parent_id=user.id, status="streaming")
    call = ToolCall(f"t{n}", "tb__echo", {"text": "hello"}, "")
    assistant.tool_calls.append(call)
    assistant.rounds.append(Round("", [call.id]))
    store.save_message(conversation.id, assistant)
    store.save_tool_call(conversation.id, assistant.id, 0, call)
    call.outcome, call.result_text, call.duration = "ok", "hello", 0.002
    store.save_tool_call(conversation.id, assistant.id, 0, call)
    assistant.status = "complete"
    store.save_message(conversation.id, assistant)
    conversation.leaf_id, conversation.updated = assistant.id, time.time()
    store.save_conversation(conversation)
    return assistant.id


def _checked_rows(conn: sqlite3.Connection) -> int:
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])


async def _writer_cpu(store: ChatStore) -> float:
    return await store.read(lambda conn: time.thread_time())


async def _branch_copy_cpu(path: Path, baseline: bool) -> float:
    """Writer CPU (ms, best of 3) of a ``COPY``-message conversation saved in one batch,
    as ``ChatHost`` saves a branch's copies."""
    best = float("inf")
    for attempt in range(3):
        file = path.with_suffix(f".{attempt}.sqlite3")
        store = await _baseline(file) if baseline else ChatStore(file, write_delay=600)
        conversation = StoredConversation(id=f"copy{attempt}")
        copies = [
            Message(
                f"copy{attempt}-{i}",
                "user" if i % 2 == 0 else "assistant",
                f"message {i} about the weather report and the invoice schedule",
            )
            for i in range(COPY)
        ]
        start = await _writer_cpu(store)
        store.save_conversation(conversation)
        store.save_many(conversation.id, copies)
        await store.flush()
        best = min(best, (await _writer_cpu(store) - start) * 1000)
        await store.close()
    return best


async def _stream_flush_cpu(tmp: Path) -> dict[str, float]:
    """Writer CPU (us, median) of one streamed-text flush (``save_text``: its own batch,
    one row whose text grew by ~40 words since the last flush), the variants alternating."""
    stores = {
        True: await _baseline(tmp / "stream-v2.sqlite3"),
        False: ChatStore(tmp / "stream-v3.sqlite3", write_delay=600),
    }
    answer = Message("s-a", "assistant", "", status="streaming")
    for store in stores.values():
        store.save_conversation(StoredConversation(id="s"))
        store.save_message("s", answer)
        await store.flush()
    used: dict[bool, list[float]] = {True: [], False: []}
    for flush in range(STREAM_FLUSHES):
        answer.text += " ".join(f"token{flush}x{k}" for k in range(40)) + " "
        for baseline, store in stores.items():
            start = await _writer_cpu(store)
            store.save_text(answer.id, answer.text, "streaming")
            await store.flush()
            used[baseline].append((await _writer_cpu(store) - start) * 1e6)
    for store in stores.values():
        await store.close()
    return {
        "stream v2 us": statistics.median(used[True]),
        "stream v3 us": statistics.median(used[False]),
    }


async def bench_writes(tmp: Path) -> dict[str, float]:
    stores = {
        "v2 triggers": await _baseline(tmp / "v2.sqlite3"),
        "v3 bulk": ChatStore(tmp / "v3.sqlite3", write_delay=600),
    }
    state = {
        name: (StoredConversation(id=f"c-{i}", title="bench"), None)
        for i, name in enumerate(stores)
    }
    per_call: dict[str, list[float]] = {name: [] for name in stores}
    for block in range(BLOCKS + 3):  # the first three warm up
        for name, store in stores.items():
            conversation, leaf = state[name]
            start = await _writer_cpu(store)
            for _ in range(CALLS_PER_BATCH):
                leaf = _one_call(store, conversation, leaf)
            await store.flush()
            used = await _writer_cpu(store) - start
            state[name] = (conversation, leaf)
            if block >= 3:
                per_call[name].append(used / CALLS_PER_BATCH)
    for store in stores.values():  # both wrote every row and kept their index exact
        assert await store.read(_checked_rows) == 2 * CALLS_PER_BATCH * (BLOCKS + 3)
        await store.close()
    figures: dict[str, float] = {}
    for name, values in per_call.items():
        figures[f"{name} min"] = min(values) * 1e6
        figures[f"{name} median"] = statistics.median(values) * 1e6
    figures["ratio"] = figures["v3 bulk median"] / figures["v2 triggers median"]
    copies = {
        name: await _branch_copy_cpu(tmp / f"copy-{i}.sqlite3", name == "v2 triggers")
        for i, name in enumerate(stores)
    }
    figures["copy v2 ms"], figures["copy v3 ms"] = copies["v2 triggers"], copies["v3 bulk"]
    figures.update(await _stream_flush_cpu(tmp))
    print(
        f"\nchat store writer-thread CPU per /call ({CALLS_PER_BATCH} calls a batch, "
        f"{BLOCKS} blocks each, alternating; 2 message rows + 1 tool call + the "
        "conversation row a call):\n"
        f"  v2 per-row FTS triggers: min {figures['v2 triggers min']:.1f} us, median "
        f"{figures['v2 triggers median']:.1f} us\n"
        f"  v3 bulk index per batch: min {figures['v3 bulk min']:.1f} us, median "
        f"{figures['v3 bulk median']:.1f} us\n"
        f"  ratio v3 / v2 (medians): {figures['ratio']:.3f}\n"
        f"a {COPY}-message branch copy in one batch (save_many), writer CPU: v2 "
        f"{figures['copy v2 ms']:.1f} ms, v3 {figures['copy v3 ms']:.1f} ms (best of 3)\n"
        f"a streamed-text flush (one row, +40 words, up to {STREAM_FLUSHES * 40} words), "
        f"writer CPU median: v2 {figures['stream v2 us']:.1f} us, v3 "
        f"{figures['stream v3 us']:.1f} us"
    )
    return figures


def test_bench_chat_store_writes(tmp_path: Path) -> None:
    figures = asyncio.run(bench_writes(tmp_path))
    assert figures["ratio"] < 1.0  # bulk indexing must beat the triggers


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(bench_writes(Path(folder)))
