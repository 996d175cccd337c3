"""Property test: the TOML key scanner finds the line of every key tomlkit parsed."""

from __future__ import annotations

from typing import Any

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.config.toml_dialect import key_lines

keys = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True) | st.sampled_from(
    ["has.dot", "has space", "quote'd", 'dq"x', "#hash", "]bracket"]
)
tricky_text = st.text(alphabet=st.sampled_from(list("ab #=[]{}'\",\\\n\t.é")), max_size=12)
scalars = st.one_of(tricky_text, st.integers(-5, 10**6), st.booleans(), st.floats(0, 10))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=6,
)
servers = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True),
    st.dictionaries(keys, values, min_size=1, max_size=4),
    min_size=1,
    max_size=3,
)


def leaf_paths(value: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        out = [path] if path else []
        for k, v in value.items():
            out += leaf_paths(v, (*path, k))
        return out
    return [path]


def written_forms(key: str) -> list[str]:
    return [key, tomlkit.string(key).as_string()]


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(servers, st.booleans())
def test_every_key_gets_the_line_where_it_is_written(data: dict[str, Any], inline: bool) -> None:
    doc = tomlkit.document()
    mcp = tomlkit.table(is_super_table=True)
    for name, entry in data.items():
        table = tomlkit.table()
        for k, v in entry.items():
            if inline and isinstance(v, dict):
                it = tomlkit.inline_table()
                it.update(v)
                table.add(k, it)
            else:
                table.add(k, v)
        table.comment("server " + name)
        mcp.add(name, table)
    doc.add("mcp", mcp)
    text = tomlkit.dumps(doc)
    assert tomlkit.parse(text).unwrap() == {"mcp": data}  # sanity: tomlkit round-trips it
    lines = key_lines(text)
    source = text.splitlines()
    for path in leaf_paths({"mcp": data}, ()):
        assert path in lines, (path, text)
        key = str(path[-1])
        line = source[lines[path] - 1]
        assert any(form in line for form in written_forms(key)), (path, line, text)
