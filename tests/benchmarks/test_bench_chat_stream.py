"""Streaming a 4,000-token answer at 200 tokens/s through the real app (scripted model
server -> chat core on the runtime thread -> ChatBridge -> the pane): the longest GUI gap
(a 10 ms heartbeat) stays under 50 ms and the transcript renders at most 60 times a
second. Baseline in the same run: the heartbeat's longest gap with the app idle.

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest -s tests/benchmarks/test_bench_chat_stream.py``
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "servers"))

TOKENS = 4000
RATE = 200.0  # tokens per second

WORDS = [
    "the",
    "model",
    "streams",
    "this",
    "answer",
    "one",
    "token",
    "at",
    "a",
    "time",
    "so",
    "the",
    "pane",
    "must",
    "keep",
    "up",
]


def _answer() -> list[str]:
    chunks = []
    for i in range(TOKENS):
        word = WORDS[i % len(WORDS)]
        chunks.append(("\n\n" if i % 60 == 59 else " ") + word)
    return chunks


class Paints(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_streaming_keeps_the_gui_smooth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from portico.ui.loop import GIL_SWITCH_INTERVAL, PorticoEventLoop, ensure_application

    monkeypatch.setenv("PORTICO_HOME", str(tmp_path / "home"))
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)  # as the app's main() does
    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        runner.run(_stream())


class _External:
    """The scripted model server in its own process (as a real model server is): its
    Python work does not compete with the app for the GIL."""

    def __init__(self, script: list[dict[str, object]]) -> None:
        import json
        import socket
        import subprocess
        import tempfile

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.file = Path(tempfile.mkstemp(suffix=".json")[1])
        self.file.write_text(json.dumps(script), encoding="utf-8")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(REPO / "tests" / "servers" / "model_server.py"),
                "--port",
                str(self.port),
                "--script",
                str(self.file),
            ],
        )
        self.openai_url = f"http://127.0.0.1:{self.port}/v1"

    def wait(self) -> None:
        import socket

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError("the model server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.file.unlink(missing_ok=True)


async def _stream() -> None:
    from tests.benchmarks.test_bench_chat_transcript import Heartbeat
    from tests.ui.chat_helpers import make_active, running_app, write_config
    from tests.ui.qt_helpers import until

    chunks = _answer()
    server = _External(
        [{"text": "".join(chunks), "chunks": chunks, "delay": 1.0 / RATE}, {"text": "Streaming"}]
    )
    try:
        await asyncio.to_thread(server.wait)
        write_config(server, everything=False)  # type: ignore[arg-type]
        async with running_app(wait_for_server=False) as desktop:
            make_active(desktop.window)
            chat = desktop.chat
            beat = Heartbeat()
            beat.start()
            await asyncio.sleep(2.0)
            idle = beat.stop()
            paints = Paints()
            chat.transcript.viewport().installEventFilter(paints)
            renders = chat.transcript.renders
            field = chat.composer.input
            field.setPlainText("Write a long answer.")
            beat.start()
            started = time.perf_counter()
            chat.composer.input.send()
            await until(lambda: chat.running, 20, "the turn to start")
            await until(lambda: not chat.running, 120, "the answer to finish")
            took = time.perf_counter() - started
            gap = beat.stop()
            cpu = beat.cpu_max()
            rendered = chat.transcript.renders - renders
            answer = chat.transcript.widgets[chat.transcript.messages[-1].id].plain_text()
    finally:
        server.stop()
    words = len(answer.split())
    print(
        f"\nstream: {TOKENS} tokens at {RATE:g}/s took {took:.1f} s; {rendered} renders "
        f"({rendered / took:.1f}/s), {paints.count} viewport paints ({paints.count / took:.1f}/s); "
        f"longest GUI gap {gap:.1f} ms (idle baseline {idle:.1f} ms, goal 50); most "
        f"GUI-thread CPU in one gap {cpu:.1f} ms"
    )
    assert words == TOKENS
    assert rendered / took <= 60.0
    assert gap < 50.0
