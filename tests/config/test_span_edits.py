"""Editing only the servers an edit touches writes what editing the whole file writes.

``ConfigDocument`` with ``spans=True`` (what ``load`` does on big files) parses the whole
file with a fast parser and gives each server it edits a round-trip tree of its own lines
(``portico.config.span_tree``). The property: on generated files of every shape, the same
random edits through both documents give identical bytes, names, values, problems (with
their lines), notes and errors at every step. Shapes the fast path must not handle alone
(anchors, tabs, several documents, sub-tables written apart...) are generated too (and
every file with CRLF line ends, a BOM, both or neither): there it hands over to the
whole-file tree, and the results must still be identical.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portico.config.document import ConfigDocument, EditError
from portico.config.model import Scope
from portico.config.span_tree import SpanTree

ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
EXAMPLES = int(os.environ.get("PORTICO_SPAN_EXAMPLES", "40"))


# -- generated files -------------------------------------------------------------------------


def _yaml_file(draw: Any) -> tuple[str, bool]:
    """A config.yaml and whether the fast path may take it (no shape it must refuse)."""
    col = draw(st.sampled_from([2, 4]), label="server column")
    step = draw(st.sampled_from([2, 4]), label="mapping indent")
    dash = draw(st.sampled_from([0, 2]), label="sequence dash offset")
    pad, inner = " " * col, " " * (col + step)
    parts = ["# my config\n"]
    if draw(st.booleans(), label="setting before"):
        parts.append("defer_tools: true  # a setting\n")
    parts.append("mcp_servers:   # the servers\n")
    shapes = draw(
        st.lists(
            st.sampled_from(["block", "flow", "multiflow", "null", "quoted", "unicode", "lists"]),
            min_size=1,
            max_size=5,
        ),
        label="shapes",
    )
    blank = draw(st.booleans(), label="blank lines between")
    for n, shape in enumerate(shapes):
        name = f"s{n}"
        if n and blank:
            parts.append("\n")
        if draw(st.booleans(), label="comment above"):
            parts.append(f"{pad}# above {name}\n")
        if shape == "block":
            parts += [
                f"{pad}{name}:\n",
                f"{inner}command: npx   # launcher\n",
                f"{inner}env:\n",
                f"{inner}{' ' * step}A: x\n",
                f"{inner}timeout: 30\n",
            ]
        elif shape == "lists":
            parts += [
                f"{pad}{name}:\n",
                f"{inner}command: uvx\n",
                f"{inner}args:\n",
                f"{inner}{' ' * dash}- -y\n",
                f"{inner}{' ' * dash}- 'pkg'  # the package\n",
                f"{inner}headers: {{X-A: b}}\n",
            ]
        elif shape == "flow":
            parts.append(f"{pad}{name}: {{command: uvx, env: {{K: v}}}}  # flow\n")
        elif shape == "multiflow":
            parts += [
                f"{pad}{name}: {{\n",
                f"{inner}command: npx,   # launcher\n",
                f"{inner}args: [-y, pkg],\n",
                f"{inner}timeout: 30\n",
                f"{pad}}}\n",
            ]
        elif shape == "null":
            parts.append(f"{pad}{name}:\n")
        elif shape == "quoted":
            parts += [f'{pad}"{name}":\n', f'{inner}"command": "node"\n', f"{inner}cwd: /tmp\n"]
        else:
            parts += [f"{pad}{name}:\n", f"{inner}command: x\n", f"{inner}env: {{ÄÖ_KEY: ü}}\n"]
        if draw(st.booleans(), label="comment after"):
            indent = draw(st.sampled_from([0, col, col + step]), label="its indent")
            parts.append(f"{' ' * indent}# after {name}\n")
    if draw(st.booleans(), label="section after"):
        parts += ["\n", "# below\n", "approvals:\n", f"{' ' * step}mode: ask\n"]
    text = "".join(parts)
    if not draw(st.booleans(), label="final newline"):
        text = text.rstrip("\n")
    unsafe = draw(
        st.sampled_from(
            ["", "", "", "", "", "", "anchor", "alias", "tab", "document", "merge", "dup"]
        ),
        label="unsafe shape",
    )
    if unsafe == "anchor":
        text = text.replace("mcp_servers:", "base: &b {command: z}\nmcp_servers:", 1)
    elif unsafe == "alias":
        text = "base: &b {K: v}\n" + text + f"\n{pad}zz:\n{inner}env: *b\n"
    elif unsafe == "tab":
        text = text.replace("# my config", "# my\tconfig", 1)
    elif unsafe == "document":
        text = "---\n" + text
    elif unsafe == "merge":
        text = "d: &d {timeout: 3}\n" + text + f"\n{pad}zz:\n{inner}<<: *d\n"
    elif unsafe == "dup":
        text = text + f"\n{pad}s0:\n{inner}command: dup\n"
    return text, unsafe == ""


def _toml_file(draw: Any) -> tuple[str, bool]:
    parts = ["# my servers\n"]
    if draw(st.booleans(), label="version"):
        parts.append("version = 1  # format\n")
    if draw(st.booleans(), label="setting"):
        parts.append("defer_tools = true\n")
    shapes = draw(
        st.lists(
            st.sampled_from(["table", "subtable", "dotted", "inline", "apart", "quoted", "arr"]),
            min_size=1,
            max_size=5,
        ),
        label="shapes",
    )
    later: list[str] = []
    for n, shape in enumerate(shapes):
        name = f"s{n}"
        if draw(st.booleans(), label="blank before"):
            parts.append("\n")
        if draw(st.booleans(), label="comment above"):
            parts.append(f"# above {name}\n")
        header = f'[mcp."{name}"]' if shape == "quoted" else f"[mcp.{name}]"
        parts += [header + "\n", 'command = ["npx", "-y", "pkg"]  # launcher\n']
        if shape == "subtable":
            parts += ["timeout = 3000\n", f"[mcp.{name}.environment]\n", 'A = "x"\n']
        elif shape == "dotted":
            parts += ['environment.A = "x"\n', "sampling.max_rpm = 5\n"]
        elif shape == "inline":
            parts += ['environment = { A = "x", B = "y" }\n', "enabled = true\n"]
        elif shape == "apart":
            later += ["\n", f"[mcp.{name}.sampling]\n", "max_rpm = 5\n"]
        elif shape == "arr":
            parts += ["args = [\n", '  "a",  # first\n', '  "b",\n', "]\n"]
        else:
            parts += ["timeout = 30000\n"]
        if draw(st.booleans(), label="comment after"):
            parts.append(f"# after {name}\n")
    if draw(st.booleans(), label="table between"):
        at = draw(st.integers(1, len(parts)), label="where")
        while at < len(parts) and not parts[at].startswith("[mcp."):
            at += 1
        parts[at:at] = ["[approvals]\n", 'mode = "ask"\n', "\n"]
    text = "".join(parts) + "".join(later)
    if not draw(st.booleans(), label="final newline"):
        text = text.rstrip("\n")
    unsafe = draw(
        st.sampled_from(["", "", "", "", "", "", "mcp table", "multiline"]), label="unsafe shape"
    )
    if unsafe == "mcp table":
        text += '\n[mcp]\nzz = { command = ["x"] }\n'
    elif unsafe == "multiline":
        text = text.replace("# my servers\n", '# my servers\nnote = """\nmany\nlines"""\n', 1)
    return text, unsafe == ""


# -- the property --------------------------------------------------------------------------

KEYS = {
    "yaml": [("timeout",), ("enabled",), ("env", "A"), ("env", "NEW"), ("args",), ("cwd",)],
    "toml": [("timeout",), ("enabled",), ("environment", "A"), ("environment", "NEW"), ("args",)],
}
NESTED = [("sampling", "max_rpm"), ("headers", "X-New"), ("tools", "include")]


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except EditError as exc:
        return type(exc).__name__, str(exc)


def _apply(doc: ConfigDocument, op: tuple[Any, ...]) -> Any:
    """One edit or query of the random sequence, on ``doc``."""
    kind, server, key, value = op
    if kind == "get":
        return doc.get(server, *key) if doc.has_server(server) else None
    if kind == "set":
        return doc.set(server, key, value)
    if kind == "set_text":
        return doc.set(server, key, doc.value_for(server, key, value))
    if kind == "unset":
        return doc.unset(server, key)
    if kind == "toggle":
        return doc.set_enabled(server, value)
    if kind == "add":
        return doc.add_server(server, value)
    if kind == "problems":
        return doc.problems(value, Scope.GLOBAL, lines=True)
    if kind == "remove":
        return doc.remove_server(server)
    if kind == "rename":
        return doc.rename_server(server, value)
    return doc.set_setting(("defer_tools",), value)


def _same(full: ConfigDocument, fast: ConfigDocument, op: tuple[Any, ...]) -> None:
    """``op`` on both documents: the same outcome, text, names and notes."""
    assert _outcome(lambda: _apply(full, op)) == _outcome(lambda: _apply(fast, op))
    assert full.text() == fast.text()
    assert full.server_names() == fast.server_names()
    assert full.notes == fast.notes


def _open(text: str, path: Path, spans: bool) -> tuple[str, Any]:
    return _outcome(lambda: ConfigDocument.from_text(text, path, spans=spans))


@pytest.mark.parametrize("dialect", ["toml", "yaml"])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(data=st.data())
def test_span_edits_write_the_bytes_whole_file_edits_write(
    dialect: str, data: st.DataObject
) -> None:
    yaml = dialect == "yaml"
    text, safe = (_yaml_file if yaml else _toml_file)(data.draw)
    if data.draw(st.booleans(), label="crlf"):
        text = text.replace("\n", "\r\n")
    if data.draw(st.booleans(), label="bom"):
        text = "\ufeff" + text
    path = Path("config.yaml" if yaml else "mcp.toml")
    opened = _open(text, path, False), _open(text, path, True)
    if opened[0][0] != "ok":  # a file that does not parse: the same error either way
        assert opened[1] == opened[0]
        return
    full, fast = opened[0][1], opened[1][1]
    if safe:
        assert isinstance(fast._tree, SpanTree), text
    assert full.text() == fast.text() == text
    whole_needed = False
    first_names = full.server_names()  # a rename leaves a name that was never in the spans
    for step in range(data.draw(st.integers(1, 6), label="steps")):
        names = full.server_names()
        kind = data.draw(
            st.sampled_from(
                ["get", "set", "set_text", "nested", "unset", "toggle", "add", "problems"]
                + ["remove", "rename", "setting"] * (step % 2)
            ),
            label="kind",
        )
        server = data.draw(st.sampled_from([*names, *names, "nobody"]), label="server")
        key = data.draw(st.sampled_from(KEYS[dialect] + NESTED), label="key")
        value: Any = None
        if kind == "set":
            value = data.draw(
                st.one_of(
                    ANY_TEXT, st.integers(1, 99), st.booleans(), st.lists(ANY_TEXT, max_size=2)
                ),
                label="value",
            )
        elif kind == "set_text":
            value = data.draw(st.sampled_from(["5", "abc #d", "0123", "[a, b]", "yes", ""]))
        elif kind == "nested":
            kind, key, value = "set", ("oauth",), {"client_id": "c"}
        elif kind == "toggle":
            value = data.draw(st.booleans(), label="enabled")
        elif kind == "add":
            server = f"added{step}"
            value = data.draw(
                st.sampled_from(
                    [
                        {"command": "npx", "args": ["-y", "p"], "env": {"A": "x"}},
                        {"url": "https://example.com/mcp", "headers": {"X": "y"}},
                    ]
                ),
                label="fields",
            )
            tail = fast._tree._layout.tail if isinstance(fast._tree, SpanTree) else None
            whole_needed |= tail is None  # nothing to add after: a table follows the servers
        elif kind == "problems":
            value = [server]
        elif kind == "rename":
            value = f"renamed{step}"
        elif kind == "setting":
            value = False
        whole_needed |= kind in ("remove", "setting")
        _same(full, fast, (kind, server, key, value))
    _same(full, fast, ("problems", "", (), full.server_names()))
    if safe and not whole_needed:
        spans = fast._tree._layout.spans
        if all(name in spans for name in first_names):
            # nothing here needs the whole file: the edits were made on the servers' lines
            assert fast._tree._whole_tree is None, text
