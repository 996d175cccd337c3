"""Per-server stderr: a ring buffer for the UI and a rotating file under the log dir.

The lines never reach Portico's own stderr. The stdio transport reads the child's stderr
pipe on the event loop (see transports.stdio) and feeds :meth:`ServerLog.add`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from portico.paths import paths

RING_LINES = 500
FILE_MAX_BYTES = 1024 * 1024
FILE_BACKUPS = 3
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def log_file_for(server: str) -> Path:
    return paths().log_dir / "servers" / f"{_SAFE.sub('_', server)}.log"


class ServerLog:
    """The recent stderr lines of one server, mirrored to a rotating file."""

    def __init__(
        self,
        server: str,
        *,
        ring_lines: int = RING_LINES,
        file: Path | None = None,
        max_bytes: int = FILE_MAX_BYTES,
        backups: int = FILE_BACKUPS,
        on_line: Callable[[str, str, str], None] | None = None,
    ) -> None:
        self.server = server
        self.lines: deque[str] = deque(maxlen=ring_lines)
        self.stderr_lines: deque[str] = deque(maxlen=ring_lines)  # the server's own lines only
        self.file = file if file is not None else log_file_for(server)
        self.max_bytes = max_bytes
        self.backups = backups
        self.on_line = on_line  # (text, stream, level) -> None; the connection publishes LogLine
        self._handle: TextIO | None = None
        self._size = 0
        self._stderr_total = 0  # lines the server ever wrote (the ring keeps the last ones)
        self._attempt_from = 0  # _stderr_total when the current attempt began
        self.write_error: str | None = None

    def add(self, text: str, stream: str = "stderr", level: str = "") -> None:
        """One line: the server's stderr, ours (``portico``), or the server's own log
        notification (``mcp``, with its MCP level)."""
        text = text.rstrip("\r\n")
        if stream == "stderr":
            shown = text
        elif stream == "mcp":
            shown = f"[{level or 'info'}] {text}"
        else:
            shown = f"[portico] {text}"
        self.lines.append(shown)
        if stream == "stderr":
            self.stderr_lines.append(text)
            self._stderr_total += 1
        self._write(shown + "\n")
        if self.on_line is not None:
            self.on_line(text, stream, level)

    def tail(self, n: int = 10) -> list[str]:
        return list(self.lines)[-n:] if n > 0 else []

    def begin_attempt(self) -> None:
        """A new connection attempt starts: its error names only its own stderr lines."""
        self._attempt_from = self._stderr_total

    def stderr_tail(self, n: int = 10) -> list[str]:
        """The last ``n`` lines the server itself wrote in this attempt (none of ours)."""
        n = min(n, self._stderr_total - self._attempt_from)
        return list(self.stderr_lines)[-n:] if n > 0 else []

    def _write(self, data: str) -> None:
        if self.write_error is not None:
            return
        try:
            if self._handle is None:
                self.file.parent.mkdir(parents=True, exist_ok=True)
                self._handle = open(self.file, "a", encoding="utf-8")  # noqa: SIM115
                self._size = self._handle.tell()
            encoded = len(data.encode("utf-8"))
            if self._size + encoded > self.max_bytes and self._size > 0:
                self._rotate()
            self._handle.write(data)
            self._handle.flush()
            self._size += encoded
        except OSError as exc:
            # Logging must never break the server; the ring buffer still has the lines.
            self.write_error = f"cannot write {self.file}: {exc}"
            self.lines.append(f"[portico] {self.write_error}")

    def _rotate(self) -> None:
        assert self._handle is not None
        self._handle.close()
        for i in range(self.backups - 1, 0, -1):
            older = self.file.with_name(f"{self.file.name}.{i}")
            if older.exists():
                older.replace(self.file.with_name(f"{self.file.name}.{i + 1}"))
        if self.backups > 0:
            self.file.replace(self.file.with_name(f"{self.file.name}.1"))
        else:
            self.file.unlink(missing_ok=True)
        self._handle = open(self.file, "a", encoding="utf-8")  # noqa: SIM115
        self._size = 0

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
