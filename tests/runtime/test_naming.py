from __future__ import annotations

import re

from portico.runtime.naming import MAX_NAME, NameMap, is_valid_name, qualify, toolset_name

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_plain_names_are_server_double_underscore_tool() -> None:
    assert qualify("github", "create_issue") == "github__create_issue"
    assert qualify("my-srv", "get-file") == "my-srv__get-file"


def test_invalid_characters_are_replaced_and_a_hash_added() -> None:
    name = qualify("fs", "read.file/v2")
    assert VALID.match(name)
    assert name.startswith("fs__read_file_v2_")
    # "read_file_v2" is a different tool and must not collide with it
    assert qualify("fs", "read_file_v2") == "fs__read_file_v2"
    assert name != qualify("fs", "read_file_v2")


def test_long_names_are_cut_to_64_with_a_stable_suffix() -> None:
    long_tool = "x" * 100
    a = qualify("server", long_tool)
    b = qualify("server", long_tool + "y")
    assert len(a) == MAX_NAME and len(b) == MAX_NAME
    assert a != b
    assert a == qualify("server", long_tool)  # stable across calls
    assert is_valid_name(a)


def test_unicode_tool_names_stay_valid_and_distinct() -> None:
    a, b = qualify("s", "résumé"), qualify("s", "résume")
    assert VALID.match(a) and VALID.match(b) and a != b


def test_name_map_maps_back_exactly() -> None:
    names = NameMap()
    tools = ["a.b", "a_b", "a b", "z" * 90, "plain"]
    qualified = names.add_all("srv", tools)
    assert len(set(qualified)) == len(tools)
    for tool, q in zip(tools, qualified, strict=True):
        origin = names.origin(q)
        assert origin is not None and (origin.server, origin.tool) == ("srv", tool)
    names.remove_server("srv")
    assert len(names) == 0 and names.origin(qualified[0]) is None


def test_toolset_name() -> None:
    assert toolset_name("github") == "mcp-github"
