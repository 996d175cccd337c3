"""One member of a JSONC file set or removed in place: everything else byte for byte."""

from __future__ import annotations

import json

import pytest

from portico.config.importers.jsonc import strip_jsonc
from portico.config.jsonc_edit import (
    JsoncEditError,
    remove_element,
    remove_member,
    set_element,
    set_member,
)

COMMENTED = """{
  // my settings
  "theme": "dark", /* keep this */
  "mcpServers": {
    "other": {"command": "x"}, // trailing comma next
  },
}
"""
ENTRY = {"type": "http", "url": "http://127.0.0.1:47800/mcp"}


def data(text: str) -> object:
    return json.loads(strip_jsonc(text))


def test_adding_keeps_comments_and_the_other_members_and_removing_restores_the_file() -> None:
    added = set_member(COMMENTED, ("mcpServers",), "portico", ENTRY)
    assert "// my settings" in added and "/* keep this */" in added
    assert "// trailing comma next" in added
    assert data(added) == {
        "theme": "dark",
        "mcpServers": {"other": {"command": "x"}, "portico": ENTRY},
    }
    again = set_member(added, ("mcpServers",), "portico", {"url": "http://127.0.0.1:1/mcp"})
    assert data(again)["mcpServers"]["portico"] == {"url": "http://127.0.0.1:1/mcp"}  # type: ignore[index]
    removed, found = remove_member(again, ("mcpServers",), "portico")
    assert found and removed == COMMENTED


def test_a_missing_servers_object_and_an_empty_file_are_made() -> None:
    made = set_member('{\n    "a": 1\n}\n', ("servers",), "portico", ENTRY)
    assert data(made) == {"a": 1, "servers": {"portico": ENTRY}}
    assert made.startswith('{\n    "a": 1,\n    "servers": {')  # the siblings' indentation
    assert data(set_member("", ("servers",), "portico", ENTRY)) == {"servers": {"portico": ENTRY}}


def test_the_only_member_and_the_first_of_several_are_removed_cleanly() -> None:
    only = '{"mcpServers": {"portico": {"url": "u"}}}'
    assert data(remove_member(only, ("mcpServers",), "portico")[0]) == {"mcpServers": {}}
    first = '{"mcpServers": {"portico": {}, "b": 2}}'
    assert data(remove_member(first, ("mcpServers",), "portico")[0]) == {"mcpServers": {"b": 2}}
    assert remove_member(first, ("mcpServers",), "nope") == (first, False)


def test_a_file_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(JsoncEditError):
        set_member("[1, 2]", ("servers",), "portico", ENTRY)
    with pytest.raises(JsoncEditError):
        set_member('{"servers": [1]}', ("servers",), "portico", ENTRY)


INPUTS = """{
	"inputs": [
		{"type": "promptString", "id": "a", "password": true}, // a's
		/* b */ {"type": "promptString", "id": "b"},
	],
}
"""
MINE = {"type": "promptString", "id": "portico-token", "password": True}


def test_an_element_is_appended_replaced_by_its_id_and_removed_byte_for_byte() -> None:
    added = set_element(INPUTS, ("inputs",), "id", MINE)
    assert "// a's" in added and "/* b */" in added
    assert [i["id"] for i in data(added)["inputs"]] == ["a", "b", "portico-token"]  # type: ignore[index]
    assert '\t\t{\n\t\t\t"type": "promptString"' in added  # the file's tabs
    again = set_element(added, ("inputs",), "id", {**MINE, "description": "new"})
    items = data(again)["inputs"]  # type: ignore[index]
    assert [i["id"] for i in items] == ["a", "b", "portico-token"]
    assert items[2]["description"] == "new"
    assert remove_element(again, ("inputs",), "id", "portico-token") == (INPUTS, True)
    assert remove_element(INPUTS, ("inputs",), "id", "nope") == (INPUTS, False)
    first_gone, removed = remove_element(INPUTS, ("inputs",), "id", "a")
    assert removed and [i["id"] for i in data(first_gone)["inputs"]] == ["b"]  # type: ignore[index]


def test_a_missing_array_is_made_and_an_emptied_one_is_written_empty() -> None:
    made = set_element('{"servers": {}}\n', ("inputs",), "id", MINE)
    assert data(made) == {"servers": {}, "inputs": [MINE]}
    empty = '{\n  "inputs": []\n}\n'
    assert remove_element(
        set_element(empty, ("inputs",), "id", MINE), ("inputs",), "id", "portico-token"
    ) == (empty, True)
    with pytest.raises(JsoncEditError, match="'inputs' is not an array"):
        set_element('{"inputs": {}}', ("inputs",), "id", MINE)
