"""Save… in a result view: the full text is written on a worker thread; a failure (a
folder that is missing or read-only) shows in the view's notice line, naming the path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from portico.runtime.results import TextPart, ToolResult
from portico.ui.pages.result_view import MAX_TEXT, ResultView
from tests.helpers.logs import AllowLogs

BIG = ("line of text\n" * (MAX_TEXT // 6)) + "the end"  # more than one part shows


def viewing(qtbot: QtBot) -> tuple[ResultView, list[str], list[tuple[str, str]]]:
    view = ResultView()
    qtbot.addWidget(view)
    view.show()
    view.show_result(ToolResult(parts=(TextPart(BIG), TextPart("second part"))))
    assert view.truncated
    saved: list[str] = []
    failed: list[tuple[str, str]] = []
    view.saved.connect(saved.append)
    view.saveFailed.connect(lambda p, r: failed.append((p, r)))
    return view, saved, failed


async def test_save_writes_the_full_text(qtbot: QtBot, tmp_path: Path) -> None:
    view, saved, failed = viewing(qtbot)
    target = tmp_path / "result.txt"
    task = view.save_to(str(target))
    assert task is not None
    await task
    assert target.read_text(encoding="utf-8") == BIG + "\nsecond part"
    assert saved == [str(target)] and failed == []
    assert view.notice.isHidden()


async def test_save_into_a_missing_folder_shows_why(
    qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(r"^saving the result to .* failed: No such file or directory")
    view, saved, failed = viewing(qtbot)
    target = tmp_path / "no-such-folder" / "result.txt"
    task = view.save_to(str(target))
    assert task is not None
    await task
    assert not target.exists() and saved == []
    assert failed and failed[0][0] == str(target)
    text = view.notice.text()
    assert view.notice.isVisible()
    assert str(target) in text and "No such file or directory" in text
    # the result is still there; a later good save clears the notice
    assert view.full_text.endswith("second part") and "line of text" in view.toPlainText()
    good = view.save_to(str(tmp_path / "ok.txt"))
    assert good is not None
    await good
    assert view.notice.isHidden()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs POSIX, not root")
async def test_save_into_a_read_only_folder_shows_why(
    qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(r"^saving the result to .* failed: Permission denied")
    view, saved, _failed = viewing(qtbot)
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        task = view.save_to(str(folder / "result.txt"))
        assert task is not None
        await task
    finally:
        folder.chmod(stat.S_IRWXU)
    assert saved == [] and not (folder / "result.txt").exists()
    text = view.notice.text()
    assert str(folder / "result.txt") in text and "Permission denied" in text


async def test_save_onto_a_folder_shows_why(
    qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    """Works as root too: the chosen path is an existing folder."""
    allow_logs(r"^saving the result to .* failed: Is a directory")
    view, saved, failed = viewing(qtbot)
    task = view.save_to(str(tmp_path))
    assert task is not None
    await task
    assert saved == [] and [p for p, _r in failed] == [str(tmp_path)]
    assert str(tmp_path) in view.notice.text() and "Is a directory" in view.notice.text()
