"""How to capture a stdio server's stderr: three ways, measured (prints figures).

Run: .venv/bin/python tests/benchmarks/bench_stderr_capture.py [lines]

A child writes N lines to stderr. We measure the wall time until the last line is in
memory and the worst event-loop stall a 5 ms ticker sees meanwhile:
  pipe-async   stderr=PIPE read by a task on the loop (what transports/stdio.py does)
  pipe-thread  os.pipe(), a reader thread, call_soon_threadsafe per line
  file-tail    a temp file as errlog, polled every 50 ms from the loop
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time

CHILD = (
    "import sys\n"
    "n = int(sys.argv[1])\n"
    "w = sys.stderr.write\n"
    "for i in range(n): w(f'a fairly typical log line from an MCP server, number {i}\\n')\n"
)


async def ticker(stop: asyncio.Event, lag: list[float]) -> None:
    while not stop.is_set():
        began = time.perf_counter()
        await asyncio.sleep(0.005)
        lag[0] = max(lag[0], time.perf_counter() - began - 0.005)


async def pipe_async(n: int) -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(n), stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    lines = 0
    pending = b""
    while chunk := await proc.stderr.read(65536):
        pending += chunk
        *done, pending = pending.split(b"\n")
        for raw in done:
            raw.decode("utf-8", "replace")
            lines += 1
    await proc.wait()
    return lines


async def pipe_thread(n: int) -> int:
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    count = [0]
    finished = asyncio.Event()

    def on_line(_text: str) -> None:
        count[0] += 1

    def reader() -> None:
        with os.fdopen(read_fd, "rb") as fh:
            for raw in fh:
                loop.call_soon_threadsafe(on_line, raw.decode("utf-8", "replace"))
        loop.call_soon_threadsafe(finished.set)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(n), stderr=write_fd
    )
    os.close(write_fd)
    await proc.wait()
    await finished.wait()
    return count[0]


async def file_tail(n: int) -> int:
    with tempfile.TemporaryFile() as fh:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", CHILD, str(n), stderr=fh)
        offset = 0
        lines = 0
        pending = b""
        while True:
            exited = proc.returncode is not None
            size = os.fstat(fh.fileno()).st_size
            if size > offset:
                data = os.pread(fh.fileno(), size - offset, offset)
                offset = size
                pending += data
                *done, pending = pending.split(b"\n")
                lines += len(done)
            elif exited:
                return lines
            await asyncio.sleep(0.05)
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 0)


async def measure(name: str, fn, n: int) -> None:
    stop = asyncio.Event()
    lag = [0.0]
    tick = asyncio.create_task(ticker(stop, lag))
    began = time.perf_counter()
    got = await fn(n)
    elapsed = time.perf_counter() - began
    stop.set()
    await tick
    print(
        f"{name:12s} {got:>7d} lines  {elapsed:6.2f} s  {got / elapsed:>9.0f} lines/s"
        f"  worst loop stall {lag[0] * 1000:5.1f} ms"
    )


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    for name, fn in (
        ("pipe-async", pipe_async),
        ("pipe-thread", pipe_thread),
        ("file-tail", file_tail),
    ):
        await measure(name, fn, n)


if __name__ == "__main__":
    asyncio.run(main())
