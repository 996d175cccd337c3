"""The one sanitizer (portico/text.py): what a terminal or a label would obey is shown."""

from __future__ import annotations

import pytest

from portico.text import visible


def test_clean_text_comes_back_as_it_is() -> None:
    for text in ("npx -y @modelcontextprotocol/server-everything", "café — naïve 日本", ""):
        assert visible(text) is text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\rb", "a\\rb"),
        ("\x1b[2K\x1b[1A", "\\x1b[2K\\x1b[1A"),
        ("bell\x07", "bell\\x07"),
        ("del\x7f", "del\\x7f"),
        ("c1\x9b", "c1\\x9b"),
        ("evil\u202etxt.exe", "evil<U+202E>txt.exe"),
        ("iso\u2066late\u2069", "iso<U+2066>late<U+2069>"),
        ("zero\u200bwidth\u2060joiner\ufeff", "zero<U+200B>width<U+2060>joiner<U+FEFF>"),
        ("tag\U000e0041", "tag<U+E0041>"),
        ("line\u2028sep", "line<U+2028>sep"),
        ("one\ntwo\tcol", "one\\ntwo\\tcol"),
    ],
)
def test_each_kind_of_hidden_character_is_shown(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_multiline_keeps_line_feeds_and_tabs_but_never_a_carriage_return() -> None:
    assert visible("one\ntwo\tcol\r\x1b[1A", multiline=True) == "one\ntwo\tcol\\r\\x1b[1A"
