from __future__ import annotations

from portico.config.model import ToolFilter
from portico.runtime.filtering import apply_filter, cost_key_warnings, decide, filter_warnings

TOOLS = ["read_file", "write_file", "list_dir", "Read_Other", "delete[1]", "search"]


def kept(rules: ToolFilter) -> list[str]:
    return [d.tool for d in apply_filter(TOOLS, rules) if d.included]


def test_no_rules_keep_everything() -> None:
    assert kept(ToolFilter()) == TOOLS


def test_exact_entries_match_exactly() -> None:
    assert kept(ToolFilter(include=("read_file",))) == ["read_file"]
    assert kept(ToolFilter(include=("read",))) == []


def test_globs_are_case_sensitive() -> None:
    assert kept(ToolFilter(include=("read_*",))) == ["read_file"]
    assert kept(ToolFilter(include=("[rR]ead_*",))) == ["read_file", "Read_Other"]
    assert kept(ToolFilter(include=("?rite_file",))) == ["write_file"]


def test_exclude_keeps_a_reason() -> None:
    decisions = {d.tool: d for d in apply_filter(TOOLS, ToolFilter(exclude=("*_file",)))}
    assert not decisions["read_file"].included
    assert decisions["read_file"].reason == "excluded by tools.exclude pattern '*_file'"
    assert decisions["list_dir"].included and decisions["list_dir"].reason is None
    d = decide("search", ToolFilter(exclude=("search",)))
    assert d.reason == "excluded by tools.exclude entry 'search'"


def test_include_wins_over_exclude() -> None:
    rules = ToolFilter(include=("read_file", "list_dir"), exclude=("read_file",))
    assert kept(rules) == ["read_file", "list_dir"]
    d = decide("search", rules)
    assert d.reason == "not matched by tools.include"
    warnings = filter_warnings("fs", TOOLS, rules)
    assert any("tools.include wins" in w for w in warnings)


def test_filter_entries_matching_nothing_warn_with_suggestion() -> None:
    warnings = filter_warnings("fs", TOOLS, ToolFilter(exclude=("raed_file",)))
    assert warnings == [
        "server 'fs': tools.exclude entry 'raed_file' matches no tool; did you mean 'read_file'?"
    ]


def test_cost_keys() -> None:
    warnings = cost_key_warnings("fs", ["read_file", "fs__write_file", "serch"], TOOLS)
    assert len(warnings) == 2
    assert "written with the server prefix; write 'write_file' instead" in warnings[0]
    assert "'serch' is not a tool this server offers; did you mean 'search'?" in warnings[1]
