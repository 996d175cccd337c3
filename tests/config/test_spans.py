"""Where each server's lines are (``toml_spans``/``yaml_spans``), and the shapes for which
an edit must parse the whole file instead (they answer None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.config import yaml_spans as yaml_spans_module
from portico.config.document import ConfigDocument
from portico.config.span_tree import SpanTree
from portico.config.toml_spans import toml_spans
from portico.config.yaml_spans import yaml_spans

YAML = """\
# top
mcp_servers:
  # above a
  a:
    command: npx   # launcher
    args: [-y, pkg]

  b: {command: uvx}
  c:
# tail
approvals:
  mode: ask
"""

TOML = """\
version = 1
[mcp.a]
command = ["npx"]
args = [
  "x",  # [not a header]
]
[mcp.a.environment]
A = "x"

# above b
[mcp."b"]
url = "https://b.example.com/mcp"
[approvals]
mode = "ask"
[mcp.c]
command = ["c"]
"""


def test_yaml_spans_run_from_a_servers_key_to_the_next() -> None:
    layout = yaml_spans(YAML)
    assert layout is not None
    assert layout.names == ("a", "b", "c")
    # a's lines take the blank line and the comment above b along (as ruamel's do)
    assert dict(layout.spans) == {"a": (3, 7), "b": (7, 8), "c": (8, 10)}
    assert layout.tail == "c" and layout.separated and layout.column == 2


def test_toml_spans_take_contiguous_sub_tables_and_skip_strings_and_arrays() -> None:
    layout = toml_spans(TOML)
    assert layout is not None
    assert layout.names == ("a", "b", "c")
    assert dict(layout.spans) == {"a": (1, 10), "b": (10, 12), "c": (14, 16)}
    assert layout.tail is None  # [approvals] sits among the servers: add to the whole file
    assert layout.data["version"] == 1


def test_a_toml_server_written_apart_has_no_span_and_nothing_follows_a_table() -> None:
    text = "[mcp.a]\ncommand = ['x']\n[approvals]\nmode = 'ask'\n[mcp.a.sampling]\nmax_rpm = 1\n"
    layout = toml_spans(text)
    assert layout is not None and layout.names == ("a",) and not layout.spans
    after = toml_spans("[mcp.a]\ncommand = ['x']\n[approvals]\n")
    assert after is not None and after.tail is None
    assert toml_spans(TOML.replace('[approvals]\nmode = "ask"\n', "")).tail == "c"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {A: x}\nmcp_servers:\n  a:\n    env: *b\n",  # anchor and alias
        "mcp_servers:\n  a:\n    <<: {timeout: 3}\n",  # a merge key
        "mcp_servers:\n  a:\n    command: !tag x\n",  # a tag
        "---\nmcp_servers:\n  a: {}\n",  # an explicit document
        "mcp_servers:\n  a: {}\n---\nb: 1\n",  # two documents
        "mcp_servers: {a: {}}\n",  # flow-style servers
        "mcp_servers:\n  a: 3\n",  # a server that is a scalar
        "mcp_servers:\n  a:\n    - x\n",  # a server that is a list
        "mcp_servers:\n  a:\n    1: x\n",  # a key that is not a plain string
        "mcp_servers:\n  a:\n    yes: x\n",
        "mcp_servers:\n  a: {}\n  a: {}\n",  # a duplicate
        "mcp_servers:\n  a:\n    command: x\t# tab\n",
        "mcp_servers:\r\n  a: {}\r\n",
        'mcp_servers:\n  a:\n    env: {K: "a\u2028b"}\n',  # a separator libyaml breaks at
        "mcp_servers:\n  a:\n    command: [x\n",  # does not parse
        "mcp_servers:\n",  # no servers
        "other: 1\n",
    ],
)
def test_yaml_shapes_that_need_the_whole_file(text: str) -> None:
    assert yaml_spans(text) is None


@pytest.mark.parametrize(
    "text",
    [
        '[mcp]\na = { command = ["x"] }\n',  # servers written as keys of [mcp]
        'mcp.a.command = ["x"]\n',  # dotted keys at the top
        'mcp = { a = { command = ["x"] } }\n',
        '[[mcp.a]]\ncommand = ["x"]\n',
        'note = """\n[mcp.fake]\n"""\n[mcp.a]\ncommand = ["x"]\n',  # a multi-line string
        '[mcp.a]\ncommand = ["x"\n',  # does not parse
        '[mcp.a]\r\ncommand = ["x"]\r\n',
        '[mcp.a]\ncommand = "unclosed\n',
    ],
)
def test_toml_shapes_that_need_the_whole_file(text: str) -> None:
    assert toml_spans(text) is None


def test_without_libyaml_a_big_yaml_file_is_parsed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = "".join(f"  s{i}:\n    command: npx\n    timeout: {i}\n" for i in range(100))
    path = tmp_path / "config.yaml"
    path.write_text("mcp_servers:\n" + servers)
    assert isinstance(ConfigDocument.load(path)._tree, SpanTree)
    monkeypatch.setattr(yaml_spans_module, "_parser", lambda: None)
    doc = ConfigDocument.load(path)
    assert not isinstance(doc._tree, SpanTree)
    doc.set("s5", "timeout", 9)
    assert "  s5:\n    command: npx\n    timeout: 9\n" in doc.text()
