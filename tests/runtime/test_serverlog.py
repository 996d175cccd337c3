"""Per-server stderr log: ring buffer, rotating file under the log dir, callbacks."""

from __future__ import annotations

from pathlib import Path

from portico.runtime.serverlog import ServerLog, log_file_for


def test_ring_buffer_keeps_the_last_lines(tmp_path: Path) -> None:
    log = ServerLog("srv", ring_lines=3, file=tmp_path / "srv.log")
    for i in range(5):
        log.add(f"line {i}\n")
    assert list(log.lines) == ["line 2", "line 3", "line 4"]
    assert log.tail(2) == ["line 3", "line 4"]
    assert (tmp_path / "srv.log").read_text().splitlines() == [f"line {i}" for i in range(5)]
    log.close()


def test_file_lives_under_the_log_dir(portico_home: Path) -> None:
    path = log_file_for("my/server")
    assert path.is_relative_to(portico_home / "logs")
    assert "/" not in path.name


def test_rotation(tmp_path: Path) -> None:
    target = tmp_path / "rot.log"
    log = ServerLog("rot", file=target, max_bytes=100, backups=2)
    for i in range(30):
        log.add(f"{i:02d} " + "x" * 20)
    log.close()
    assert target.exists()
    assert (tmp_path / "rot.log.1").exists() and (tmp_path / "rot.log.2").exists()
    assert not (tmp_path / "rot.log.3").exists()
    assert target.stat().st_size <= 100
    assert "29 " in target.read_text()


def test_portico_lines_are_marked_and_published(tmp_path: Path) -> None:
    seen: list[tuple[str, str, str]] = []
    log = ServerLog(
        "s",
        file=tmp_path / "s.log",
        on_line=lambda text, stream, level: seen.append((text, stream, level)),
    )
    log.add("server said hi")
    log.add("we restarted it", "portico")
    log.add("disk almost full", "mcp", level="warning")
    assert seen == [
        ("server said hi", "stderr", ""),
        ("we restarted it", "portico", ""),
        ("disk almost full", "mcp", "warning"),
    ]
    assert list(log.lines) == [
        "server said hi",
        "[portico] we restarted it",
        "[warning] disk almost full",
    ]
    log.close()


def test_unwritable_file_keeps_the_ring(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    log = ServerLog("s", file=blocker / "s.log")
    log.add("still kept")
    assert "still kept" in log.lines
    assert log.write_error is not None and "cannot write" in log.write_error
