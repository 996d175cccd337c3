"""Property tests: random edit sequences on the commented corpus files.

For every sequence of set / unset / add / remove / rename / toggle:
- no comment line is lost, except those a removed server owned (its body and the comment
  block directly above it, computed here from the original text);
- the text parses (with parsers independent of the editor: tomllib, ruamel's safe
  loader) to exactly the model the edits describe, applied to plain dicts;
- the loader (portico.config.load) agrees on every server's ``enabled``.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from portico.config.document import ConfigDocument
from portico.config.load import parse_text
from portico.config.translate import to_dialect

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(
    p.name
    for p in CORPUS.glob("*_*.*")
    if p.suffix in (".toml", ".yaml") and not parse_text(p.read_text(), p).unparsed
)


# -- independent reading ------------------------------------------------------------------


def parse_plain(text: str, yaml: bool) -> dict[str, Any]:
    if yaml:
        return YAML(typ="safe").load(text) or {}
    return tomllib.loads(text)


def is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def standalone_comments(text: str) -> Counter[str]:
    return Counter(line.strip() for line in text.splitlines() if is_comment(line))


_TOML_HEADER = re.compile(r"^\s*\[(?!\[)\s*([^\]]+?)\s*\]")


def _toml_server_of(header: str) -> str | None:
    parts = [p.strip().strip('"').strip("'") for p in header.split(".")]
    return parts[1] if len(parts) >= 2 and parts[0] == "mcp" else None


def owned_comment_lines(text: str, yaml: bool) -> dict[str, list[int]]:
    """Line numbers of the comment lines each server owns (removed along with it)."""
    lines = text.splitlines()
    owned: dict[str, list[int]] = {}
    if yaml:
        top = next((i for i, line in enumerate(lines) if line.startswith("mcp_servers:")), None)
        if top is None:
            return owned
        body = [
            i for i in range(top + 1, len(lines)) if lines[i].strip() and not is_comment(lines[i])
        ]
        if not body:
            return owned
        column = len(lines[body[0]]) - len(lines[body[0]].lstrip())
        if column == 0:
            return owned
        starts: list[tuple[int, str]] = []
        end_of_servers = len(lines)
        for i in body:
            indent = len(lines[i]) - len(lines[i].lstrip())
            if indent < column:
                end_of_servers = i
                break
            if indent == column:
                starts.append((i, lines[i].strip().split(":")[0].strip("\"'")))
        bounds = [s for s, _ in starts] + [end_of_servers]
        for (start, name), end in zip(starts, bounds[1:], strict=True):
            stop = end
            while stop > start + 1 and (
                not lines[stop - 1].strip()
                or (is_comment(lines[stop - 1]) and _indent(lines[stop - 1]) <= column)
            ):
                stop -= 1
            mine = [i for i in range(start, stop) if is_comment(lines[i])]
            lead = start
            while lead > 0 and is_comment(lines[lead - 1]) and _indent(lines[lead - 1]) <= column:
                lead -= 1
            if lead > 0:
                mine += list(range(lead, start))
            owned.setdefault(name, []).extend(mine)
        return owned
    headers = [(i, _TOML_HEADER.match(line)) for i, line in enumerate(lines)]
    header_lines = [(i, m.group(1)) for i, m in headers if m]
    # servers written as `name = { ... }` lines under an explicit [mcp] table
    for n, (start, header) in enumerate(header_lines):
        if header.strip() != "mcp":
            continue
        end = header_lines[n + 1][0] if n + 1 < len(header_lines) else len(lines)
        for i in range(start + 1, end):
            match = re.match(r"""^\s*["']?([A-Za-z0-9_-]+)["']?\s*=\s*\{""", lines[i])
            if match:
                lead = i
                while lead > 0 and is_comment(lines[lead - 1]):
                    lead -= 1
                owned.setdefault(match.group(1), []).extend(range(lead, i))
    for n, (start, header) in enumerate(header_lines):
        name = _toml_server_of(header)
        if name is None:
            continue
        end = header_lines[n + 1][0] if n + 1 < len(header_lines) else len(lines)
        stop = end
        next_is_same = n + 1 < len(header_lines) and _toml_server_of(header_lines[n + 1][1]) == name
        if end < len(lines) and not next_is_same:  # a block right above the next header is its
            while stop > start + 1 and is_comment(lines[stop - 1]):
                stop -= 1
        mine = [i for i in range(start, stop) if is_comment(lines[i])]
        lead = start
        while lead > 0 and is_comment(lines[lead - 1]):
            lead -= 1
        previous_is_same = n > 0 and _toml_server_of(header_lines[n - 1][1]) == name
        if lead > 0 and not previous_is_same:
            mine += list(range(lead, start))
        owned.setdefault(name, []).extend(mine)
    return owned


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# -- the model the edits describe ----------------------------------------------------------


class Model:
    def __init__(self, text: str, yaml: bool) -> None:
        self.yaml = yaml
        self.data = parse_plain(text, yaml)
        self.servers_key = "mcp_servers" if yaml else "mcp"
        self.explicit_mcp_table = bool(re.search(r"^\s*\[\s*mcp\s*\]", text, re.M))
        self.removed_original: list[str] = []  # original names of removed servers
        self.original_name: dict[str, str] = {n: n for n in self.servers()}
        # YAML keys a server only has through `<<: *anchor` (an unset leaves them be)
        self.merged: dict[str, set[str]] = {}
        self.anchored: dict[str, dict[str, Any]] = {}  # the anchor's values of those keys
        if yaml:
            tree = YAML(typ="rt").load(text) or {}
            plain_servers = self.servers()
            for server, entry in (tree.get("mcp_servers") or {}).items():
                own = getattr(entry, "_ok", None)
                if own is not None:
                    self.merged[server] = {k for k in entry if k not in own}
                    self.anchored[server] = {
                        k: copy.deepcopy(plain_servers[server][k]) for k in self.merged[server]
                    }

    def servers(self) -> dict[str, Any]:
        found = self.data.get(self.servers_key)
        return found if isinstance(found, dict) else {}

    def env_key(self, server: str) -> str:
        entry = self.servers()[server]
        for spelling in ("environment", "env") if not self.yaml else ("env", "environment"):
            if spelling in entry:
                return spelling
        return "env" if self.yaml else "environment"

    def set(self, server: str, path: tuple[str, ...], value: Any) -> None:
        self.merged.get(server, set()).discard(path[0])
        node = self.servers()[server]
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = copy.deepcopy(value)

    def unset(self, server: str, path: tuple[str, ...]) -> None:
        if path[0] in self.merged.get(server, set()):
            return
        anchored = self.anchored.get(server, {})
        if len(path) == 1 and path[0] in anchored:  # the anchor's value shows again
            self.servers()[server][path[0]] = copy.deepcopy(anchored[path[0]])
            self.merged[server].add(path[0])
            return
        node = self.servers()[server]
        for part in path[:-1]:
            node = node.get(part)
            if not isinstance(node, dict):
                return
        node.pop(path[-1], None)

    def add(self, name: str, fields: dict[str, Any]) -> None:
        self.data.setdefault(self.servers_key, {})[name] = to_dialect(fields, self.dialect)
        self.original_name[name] = name

    @property
    def dialect(self) -> Any:
        from portico.config.model import Dialect

        return Dialect.YAML if self.yaml else Dialect.TOML

    def remove(self, name: str) -> None:
        del self.servers()[name]
        original = self.original_name.pop(name)
        self.removed_original.append(original)
        if not self.servers():
            # YAML writes `mcp_servers: {}`; TOML keeps an explicit [mcp] header, while
            # [mcp.NAME] tables leave nothing behind
            if self.yaml or self.explicit_mcp_table:
                self.data[self.servers_key] = {}
            else:
                del self.data[self.servers_key]

    def rename(self, old: str, new: str) -> None:
        servers = self.servers()
        renamed = {(new if key == old else key): value for key, value in servers.items()}
        servers.clear()
        servers.update(renamed)
        if old in self.merged:
            self.merged[new] = self.merged.pop(old)
            self.anchored[new] = self.anchored.pop(old)
        self.original_name[new] = self.original_name.pop(old)


# -- the property --------------------------------------------------------------------------

SCALAR_KEYS = ("enabled", "always_load", "timeout")


def _value_for(key: str, draw: Any, yaml: bool) -> Any:
    if key in ("enabled", "always_load"):
        return draw(st.booleans())
    if key == "timeout":
        return draw(st.integers(1, 300)) * (1 if yaml else 1000)
    return draw(st.integers(1, 60))


@pytest.mark.parametrize("name", FILES)
@settings(
    max_examples=int(os.environ.get("PORTICO_EDIT_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(data=st.data())
def test_random_edits_keep_comments_and_reach_the_model(name: str, data: st.DataObject) -> None:
    yaml = name.endswith(".yaml")
    source = (CORPUS / name).read_text()
    path = CORPUS / name
    doc = ConfigDocument.from_text(source, path)
    model = Model(source, yaml)
    counter = 0
    set_keys: dict[str, list[tuple[str, ...]]] = {}

    steps = data.draw(st.integers(1, 6), label="steps")
    for _ in range(steps):
        names = doc.server_names()
        assert names == list(model.servers())
        kind = data.draw(
            st.sampled_from(
                [
                    "set",
                    "set_env",
                    "set_header",
                    "set_nested",
                    "set_list",
                    "unset",
                    "add",
                    "remove",
                    "rename",
                    "toggle",
                ]
                if names
                else ["add"]
            ),
            label="kind",
        )
        counter += 1
        if kind == "add":
            new = f"added-{counter}"
            fields: dict[str, Any] = data.draw(
                st.sampled_from(
                    [
                        {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "${env:A}"}},
                        {"url": "https://mcp.example.com/mcp", "timeout": 12},
                        {"command": "uvx", "args": ["mcp-server-fetch"], "enabled": False},
                    ]
                ),
                label="fields",
            )
            doc.add_server(new, fields)
            model.add(new, fields)
            continue
        server = data.draw(st.sampled_from(names), label="server")
        if kind == "set":
            key = data.draw(st.sampled_from(SCALAR_KEYS), label="key")
            value = _value_for(key, data.draw, yaml)
            doc.set(server, (key,), value)
            model.set(server, (key,), value)
            set_keys.setdefault(server, []).append((key,))
        elif kind == "set_env":
            var = f"PROP_VAR_{counter}"
            env = model.env_key(server)
            value = data.draw(st.sampled_from(["plain", "${env:X}", "with space", "q'uote\""]))
            doc.set(server, (env, var), value)
            model.set(server, (env, var), value)
            set_keys.setdefault(server, []).append((env, var))
        elif kind == "set_header":
            header = f"X-Prop-{counter}"
            value = data.draw(st.sampled_from(["v", "Bearer ${keyring:k}"]), label="header")
            doc.set(server, ("headers", header), value)
            model.set(server, ("headers", header), value)
            set_keys.setdefault(server, []).append(("headers", header))
        elif kind == "set_list":
            models = data.draw(st.lists(st.sampled_from(["m-1", "m 2", "m'3"]), max_size=3))
            doc.set(server, ("sampling", "allowed_models"), models)
            model.set(server, ("sampling", "allowed_models"), models)
            set_keys.setdefault(server, []).append(("sampling", "allowed_models"))
        elif kind == "set_nested":
            value = data.draw(st.integers(1, 60), label="max_rpm")
            doc.set(server, ("sampling", "max_rpm"), value)
            model.set(server, ("sampling", "max_rpm"), value)
            set_keys.setdefault(server, []).append(("sampling", "max_rpm"))
        elif kind == "unset":
            choices = [*set_keys.get(server, []), *[(k,) for k in SCALAR_KEYS]]
            key_path = data.draw(st.sampled_from(choices), label="unset key")
            doc.unset(server, key_path)
            model.unset(server, key_path)
        elif kind == "toggle":
            enabled = data.draw(st.booleans(), label="enabled")
            doc.set_enabled(server, enabled)
            model.set(server, ("enabled",), enabled)
        elif kind == "remove":
            doc.remove_server(server)
            model.remove(server)
            set_keys.pop(server, None)
        elif kind == "rename":
            new = f"renamed-{counter}"
            doc.rename_server(server, new)
            model.rename(server, new)
            if server in set_keys:
                set_keys[new] = set_keys.pop(server)

    text = doc.text()
    # 1. the model the edits describe, read back by an independent parser
    assert parse_plain(text, yaml) == model.data
    # 2. no comment line lost, except those owned by removed servers
    owned = owned_comment_lines(source, yaml)
    lines = source.splitlines()
    gone = Counter(
        lines[i].strip() for removed in model.removed_original for i in owned.get(removed, [])
    )
    expected = standalone_comments(source) - gone
    survived = standalone_comments(text)
    lost = expected - survived
    assert not lost, f"comment lines lost: {sorted(lost)}\n--- text ---\n{text}"
    # 3. the loader reads the same enabled flags
    config = parse_text(text, path)
    for spec in config.servers:
        assert spec.enabled == model.servers()[spec.name].get("enabled", True)


# -- generated documents: every shape a person writes ---------------------------------------
#
# Each generated file mixes the shapes issue 12 found broken: YAML flow maps on one line
# and over several lines, aliases of a top-level anchor, merge keys; TOML dotted-key
# servers under [mcp], inline servers, sub-tables written apart; CRLF line ends, a BOM,
# tabs before comments, unicode keys, and a comment on or above nearly every line. The
# edits set arbitrary strings. Comment lines carry the name of the server that owns them,
# so the check knows which may go with a removed server.

ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
UNICODE_KEYS = ["KEY", "ÄÖÜ_KEY", "ключ", "キー", "K-2"]


def _yaml_doc(draw: Any) -> tuple[str, list[str]]:
    gap = draw(st.sampled_from(["   ", "  "]), label="comment gap")
    key = draw(st.sampled_from(UNICODE_KEYS), label="env key")
    parts = [
        "# top-file\n",
        "shared: &shared_env\n",
        f"  LOG: info{gap}# top-anchor\twith a tab\n",
        "defaults: &defaults\n",
        "  timeout: 20\n",
        "mcp_servers:\n",
    ]
    names: list[str] = []
    shapes = draw(
        st.lists(
            st.sampled_from(["block", "flow", "multiflow", "alias", "merge"]),
            min_size=1,
            max_size=5,
        ),
        label="shapes",
    )
    for n, shape in enumerate(shapes):
        name = f"s{n}"
        names.append(name)
        parts.append(f"  # above-{name}\n")
        if shape == "block":
            parts += [
                f"  {name}:\n",
                f"    command: npx{gap}# c-{name}\n",
                "    env:\n",
                f'      {key}: "v"  # c-{name}\n',
            ]
        elif shape == "flow":
            parts.append(f"  {name}: {{command: uvx, env: {{{key}: v}}}}{gap}# c-{name}\n")
        elif shape == "multiflow":
            parts += [
                f"  {name}: {{\n",
                f"    command: npx,{gap}# c-{name}\n",
                f"    args: [-y, pkg],  # c-{name}\n",
                "    timeout: 30\n",
                "  }\n",
            ]
        elif shape == "alias":
            parts += [f"  {name}:\n", "    command: x\n", f"    env: *shared_env  # c-{name}\n"]
        else:
            parts += [f"  {name}:\n", "    <<: *defaults\n", f"    command: y  # c-{name}\n"]
        if draw(st.booleans(), label="blank"):
            parts.append("\n")
    parts += ["# top-tail\n", "other_tool:\n", "  keep: 1  # top-other\n"]
    return "".join(parts), names


def _toml_doc(draw: Any) -> tuple[str, list[str]]:
    gap = draw(st.sampled_from(["   ", "  "]), label="comment gap")
    key = draw(st.sampled_from(UNICODE_KEYS), label="env key")
    bare = key.isascii() and key.replace("_", "").replace("-", "").isalnum()
    quoted = key if bare else f'"{key}"'
    shapes = draw(
        st.lists(st.sampled_from(["table", "dotted", "inline", "apart"]), min_size=1, max_size=5),
        label="shapes",
    )
    names = [f"s{n}" for n in range(len(shapes))]
    order = [n for n, s in zip(names, shapes, strict=True) if s in ("dotted", "inline")]
    order += [n for n in names if n not in order]
    under_mcp: list[str] = []
    tables: list[str] = []
    later: list[str] = []
    for name, shape in zip(names, shapes, strict=True):
        if shape == "dotted":
            under_mcp += [
                f"# above-{name}\n",
                f'{name}.command = ["npx", "{name}"]{gap}# c-{name}\n',
                f"{name}.timeout = 5000\n",
            ]
        elif shape == "inline":
            under_mcp += [
                f"# above-{name}\n",
                f'{name} = {{ command = ["x"], environment = {{ {quoted} = "v" }} }}'
                f"{gap}# c-{name}\n",
            ]
        else:
            tables += [
                "\n",
                f"# above-{name}\n",
                f"[mcp.{name}]\n",
                f'command = ["npx"]{gap}# c-{name}\n',
                f'environment = {{ {quoted} = "v" }}\n',
            ]
            if shape == "apart":
                later += ["\n", f"# above-{name}\n", f"[mcp.{name}.sampling]\n", "max_rpm = 5\n"]
    text = "# top-file\nversion = 1\n"
    if under_mcp:
        text += "\n[mcp]\n" + "".join(under_mcp)
    text += "".join(tables) + "".join(later)
    return text, order


def _owner_comments(text: str) -> Counter[str]:
    return Counter(line.strip() for line in text.splitlines() if is_comment(line))


def _comment_survives(line: str, removed: set[str]) -> bool:
    match = re.search(r"# (?:c|above)-(s\d+)", line)
    return match is None or match.group(1) not in removed


@pytest.mark.parametrize("dialect", ["toml", "yaml"])
@settings(
    max_examples=int(os.environ.get("PORTICO_SHAPE_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow
@given(data=st.data())
def test_edits_on_every_shape_reach_the_model_and_touch_only_their_lines(
    dialect: str, data: st.DataObject
) -> None:
    yaml = dialect == "yaml"
    text, names = (_yaml_doc if yaml else _toml_doc)(data.draw)
    crlf = data.draw(st.booleans(), label="crlf")
    bom = data.draw(st.booleans(), label="bom")
    original = ("\ufeff" if bom else "") + (text.replace("\n", "\r\n") if crlf else text)
    path = Path("config.yaml" if yaml else "mcp.toml")
    doc = ConfigDocument.from_text(original, path)
    model = Model(text, yaml)
    model.data = json.loads(json.dumps(model.data))  # aliases are shared objects: unshare
    assert doc.server_names() == names
    original_name = {n: n for n in names}
    removed: set[str] = set()
    env = "env" if yaml else "environment"
    for step in range(data.draw(st.integers(1, 5), label="steps")):
        current = doc.server_names()
        kind = data.draw(
            st.sampled_from(["set_env", "set_timeout", "toggle", "unset", "rename", "remove"])
            if current
            else st.just("add"),
            label="kind",
        )
        before = doc.text()
        if kind == "add":
            new = f"added{step}"
            doc.add_server(new, {"command": "npx", "env": {"A": "x"}})
            model.add(new, {"command": "npx", "env": {"A": "x"}})
            original_name[new] = new
            continue
        server = data.draw(st.sampled_from(current), label="server")
        if kind == "set_env":
            value = data.draw(ANY_TEXT, label="value")
            var = data.draw(st.sampled_from(["NEW", *UNICODE_KEYS]), label="var")
            written = model.env_key(server)
            doc.set(server, (written, var), doc.value_for(server, (written, var), value))
            model.set(server, (written, var), value)
        elif kind == "set_timeout":
            value = data.draw(st.integers(1, 300), label="seconds") * (1 if yaml else 1000)
            doc.set(server, ("timeout",), doc.value_for(server, ("timeout",), str(value)))
            model.set(server, ("timeout",), value)
        elif kind == "toggle":
            enabled = data.draw(st.booleans(), label="enabled")
            doc.set_enabled(server, enabled)
            model.set(server, ("enabled",), enabled)
        elif kind == "unset":
            key_path = data.draw(
                st.sampled_from([("timeout",), ("enabled",), (env, "NEW")]), label="unset"
            )
            written = (model.env_key(server), "NEW") if key_path[0] == env else key_path
            doc.unset(server, written)
            model.unset(server, written)
        elif kind == "rename":
            new = f"renamed{step}"
            doc.rename_server(server, new)
            model.rename(server, new)
            original_name[new] = original_name.pop(server)
        else:
            doc.remove_server(server)
            model.remove(server)
            removed.add(original_name.pop(server))
        after = doc.text()
        # only the edited server's lines change (a rename: only lines naming it)
        if kind in ("set_env", "set_timeout", "toggle", "unset"):
            gone = [
                line
                for line in difflib.unified_diff(
                    before.splitlines(), after.splitlines(), n=0, lineterm=""
                )
                if line.startswith("-") and not line.startswith("---")
            ]
            for line in gone:
                assert _line_of(line[1:], server, original_name[server], yaml), (kind, line)
        elif kind == "rename":
            changed = [
                (a, b)
                for a, b in zip(before.splitlines(), after.splitlines(), strict=True)
                if a != b
            ]
            assert changed and all(server in a and new in b for a, b in changed)
    final = doc.text()
    assert final.startswith("\ufeff") == bom
    assert ("\r\n" in final) == crlf or not final.count("\n")
    body = final.removeprefix("\ufeff").replace("\r\n", "\n")
    assert parse_plain(body, yaml) == model.data
    lost = [
        line
        for line, count in _owner_comments(text).items()
        if _comment_survives(line, removed) and _owner_comments(body)[line] < count
    ]
    assert not lost, f"comment lines lost: {lost}\n--- text ---\n{body}"


def _line_of(line: str, server: str, original: str, yaml: bool) -> bool:
    """Whether a line removed by an edit of ``server`` can only have been its own."""
    stripped = line.strip()
    if not stripped or stripped in ("}", "{"):
        return True
    if f"c-{original}" in line or f"above-{original}" in line:
        return True
    if yaml:
        return line.startswith("    ") or line.lstrip().startswith(f"{server}:")
    return stripped.startswith(
        (f"{server}.", f"{server} =", f"[mcp.{server}")
    ) or not stripped.startswith(("[", "#", "s", "added", "renamed", "version"))
