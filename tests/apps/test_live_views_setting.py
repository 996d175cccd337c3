"""``chat.live_views``: how many MCP Apps views a chat keeps loaded. Yours to set within
1..20 (default 3); a project may load fewer, never more."""

from __future__ import annotations

from pathlib import Path

from portico.config import Scope, load_files
from portico.config.model import DEFAULT_LIVE_VIEWS


def test_live_views_is_yours_and_a_project_may_only_lower_it(tmp_path: Path) -> None:
    assert load_files([]).settings.chat_live_views == DEFAULT_LIVE_VIEWS == 3
    mine = tmp_path / "config.yaml"
    mine.write_text("chat:\n  live_views: 6\n")
    assert load_files([(mine, Scope.GLOBAL)]).settings.chat_live_views == 6

    fewer = tmp_path / "fewer.yaml"
    fewer.write_text("chat:\n  live_views: 2\n")
    config = load_files([(mine, Scope.GLOBAL), (fewer, Scope.PROJECT)])
    assert config.settings.chat_live_views == 2 and not config.diagnostics

    more = tmp_path / "more.yaml"
    more.write_text("chat:\n  live_views: 12\n")
    config = load_files([(mine, Scope.GLOBAL), (more, Scope.PROJECT)])
    assert config.settings.chat_live_views == 6
    [warning] = [str(d) for d in config.diagnostics]
    assert warning.startswith(f"{more}:2: chat.live_views: warning: ignored: a project file")


def test_a_bad_value_is_named_and_the_default_used(tmp_path: Path) -> None:
    mine = tmp_path / "config.yaml"
    for value, words in (("0", "below the minimum 1"), ("50", "above the maximum 20")):
        mine.write_text(f"chat:\n  live_views: {value}\n")
        config = load_files([(mine, Scope.GLOBAL)])
        assert config.settings.chat_live_views == DEFAULT_LIVE_VIEWS
        [problem] = [str(d) for d in config.diagnostics]
        assert problem.startswith(f"{mine}:2: chat.live_views: ") and words in problem
