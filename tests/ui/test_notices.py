"""The notice area: one row per (server, kind); saying the same again keeps the row."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from portico.prompts import Notice
from portico.ui.notices import NoticeArea


def test_an_equal_notice_keeps_its_row_and_takes_the_new_action(qtbot: QtBot) -> None:
    area = NoticeArea()
    qtbot.addWidget(area)
    area.show()
    clicked: list[str] = []
    notice = Notice("warning", "linear needs you to sign in.", server="linear", kind="auth")
    first = area.post(notice, ("Sign in…", lambda: clicked.append("old")))
    qtbot.waitUntil(first.isVisible, timeout=2000)  # a layout shows a new child queued
    again = area.post(notice, ("Sign in…", lambda: clicked.append("new")))
    assert again is first and first.isVisible() and area.rows() == [first]
    assert first.action_button is not None
    first.action_button.click()
    assert clicked == ["new"]  # the latest poster's action, once
    assert area.rows() == [] and not area.isVisible()


def test_a_changed_notice_of_the_same_kind_replaces_the_row(qtbot: QtBot) -> None:
    area = NoticeArea()
    qtbot.addWidget(area)
    area.show()
    first = area.post(Notice("warning", "signing in…", server="linear", kind="auth"))
    second = area.post(Notice("error", "sign-in failed", server="linear", kind="auth"))
    assert second is not first and area.rows() == [second]
    qtbot.waitUntil(second.isVisible, timeout=2000)
    assert not first.isVisible()
    # a different action label is a different notice too
    third = area.post(
        Notice("error", "sign-in failed", server="linear", kind="auth"), ("Retry", lambda: None)
    )
    assert third is not second and area.rows() == [third]
