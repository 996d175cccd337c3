"""Each kind of edit changes exactly the edited lines of a commented file, nothing else.

The expected hunks are zero-context unified diffs of the corpus files
``tests/config/corpus/edit_servers.{toml,yaml}`` before and after one edit.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from portico.config.document import ConfigDocument, DocumentParseError
from portico.config.load import parse_text

CORPUS = Path(__file__).parent / "corpus"


def hunks(before: str, after: str) -> str:
    diff = difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
    return "".join(list(diff)[2:])


Edit = Callable[[ConfigDocument, bool], None]

EDITS: dict[str, Edit] = {
    "set_scalar": lambda d, y: d.set("filesystem", "timeout", 20 if y else 20000),
    "set_nested_inline": lambda d, y: d.set(
        "github", ("env" if y else "environment", "LOG_LEVEL"), "debug"
    ),
    "set_new_table": lambda d, y: d.set("memory", "sampling.max_rpm", 5),
    "set_in_subtable": lambda d, y: d.set("docs", "tools.exclude", ["delete_*"]),
    "set_oauth": lambda d, y: d.set("docs", "oauth.client_id", "other"),
    "unset_scalar": lambda d, y: d.unset("filesystem", "timeout"),
    "unset_nested": lambda d, y: d.unset("docs", "tools.include"),
    "enable": lambda d, y: d.set_enabled("github", True),
    "disable": lambda d, y: d.set_enabled("memory", False),
    "add": lambda d, y: d.add_server(
        "fetch", {"command": "uvx", "args": ["mcp-server-fetch"], "timeout": 45}
    ),
    "remove_first": lambda d, y: d.remove_server("filesystem"),
    "remove_middle": lambda d, y: d.remove_server("github"),
    "remove_last": lambda d, y: d.remove_server("memory"),
    "rename": lambda d, y: d.rename_server("docs", "team-docs"),
    "setting": lambda d, y: d.set_setting("defer_tools", 30),
}

EXPECTED: dict[tuple[str, str], str] = {
    ("toml", "set_scalar"): (
        "@@ -10 +10 @@\n"
        "-timeout = 15000  # large folders list slowly\n"
        "+timeout = 20000  # large folders list slowly\n"
    ),
    ("toml", "set_nested_inline"): (
        "@@ -15 +15 @@\n"
        '-environment = { GITHUB_PERSONAL_ACCESS_TOKEN = "${keyring:github-pat}" }\n'
        '+environment = { GITHUB_PERSONAL_ACCESS_TOKEN = "${keyring:github-pat}", LOG_LEVEL = "debug" }\n'  # noqa: E501
    ),
    ("toml", "set_new_table"): ("@@ -30,0 +31 @@\n+sampling = { max_rpm = 5 }\n"),
    ("toml", "set_in_subtable"): ('@@ -26,0 +27 @@\n+  exclude = ["delete_*"]\n'),
    ("toml", "set_oauth"): (
        "@@ -22 +22 @@\n"
        '-oauth = { client_id = "portico-docs", callback_port = 33418 }\n'
        '+oauth = { client_id = "other", callback_port = 33418 }\n'
    ),
    ("toml", "unset_scalar"): ("@@ -10 +9,0 @@\n-timeout = 15000  # large folders list slowly\n"),
    ("toml", "unset_nested"): ('@@ -26 +25,0 @@\n-  include = ["search_*", "read_page"]\n'),
    ("toml", "enable"): ("@@ -16 +16 @@\n-enabled = false\n+enabled = true\n"),
    ("toml", "disable"): ("@@ -30,0 +31 @@\n+enabled = false\n"),
    ("toml", "add"): (
        "@@ -30,0 +31,4 @@\n"
        "+\n"
        "+[mcp.fetch]\n"
        '+command = ["uvx", "mcp-server-fetch"]\n'
        "+timeout = 45000\n"
    ),
    ("toml", "remove_first"): (
        "@@ -6,5 +5,0 @@\n"
        "-\n"
        "-# Local files: only the notes folder.\n"
        "-[mcp.filesystem]\n"
        '-command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "~/notes"]\n'
        "-timeout = 15000  # large folders list slowly\n"
    ),
    ("toml", "remove_middle"): (
        "@@ -11,7 +10,0 @@\n"
        "-\n"
        "-# GitHub through the official server; token from the keyring.\n"
        "-[mcp.github]\n"
        '-command = ["npx", "-y", "@modelcontextprotocol/server-github"]\n'
        '-environment = { GITHUB_PERSONAL_ACCESS_TOKEN = "${keyring:github-pat}" }\n'
        "-enabled = false\n"
        "-# always_load = true\n"
    ),
    ("toml", "remove_last"): (
        "@@ -27,4 +26,0 @@\n"
        "-\n"
        "-# Memory server for long-running chats.\n"
        "-[mcp.memory]\n"
        '-command = ["npx", "-y", "@modelcontextprotocol/server-memory"]\n'
    ),
    ("toml", "rename"): (
        "@@ -19 +19 @@\n"
        "-[mcp.docs]\n"
        "+[mcp.team-docs]\n"
        "@@ -25 +25 @@\n"
        "-  [mcp.docs.tools]\n"
        "+  [mcp.team-docs.tools]\n"
    ),
    ("toml", "setting"): (
        "@@ -5 +5 @@\n"
        "-defer_tools = 12  # I have a lot of small servers\n"
        "+defer_tools = 30  # I have a lot of small servers\n"
    ),
    ("yaml", "set_scalar"): (
        "@@ -10 +10 @@\n"
        "-    timeout: 15   # seconds; large folders list slowly\n"
        "+    timeout: 20   # seconds; large folders list slowly\n"
    ),
    ("yaml", "set_nested_inline"): ("@@ -19,0 +20 @@\n+      LOG_LEVEL: debug\n"),
    ("yaml", "set_new_table"): ("@@ -32,0 +33,2 @@\n+    sampling:\n+      max_rpm: 5\n"),
    ("yaml", "set_in_subtable"): ("@@ -27,0 +28 @@\n+      exclude: [delete_*]\n"),
    ("yaml", "set_oauth"): ("@@ -27,0 +28,2 @@\n+    oauth:\n+      client_id: other\n"),
    ("yaml", "unset_scalar"): (
        "@@ -10 +9,0 @@\n-    timeout: 15   # seconds; large folders list slowly\n"
    ),
    ("yaml", "unset_nested"): (
        "@@ -26,2 +26 @@\n-    tools:\n-      include: [search_*, read_page]\n+    tools: {}\n"
    ),
    ("yaml", "enable"): ("@@ -20 +20 @@\n-    enabled: false\n+    enabled: true\n"),
    ("yaml", "disable"): ("@@ -32,0 +33 @@\n+    enabled: false\n"),
    ("yaml", "add"): (
        "@@ -33,0 +34,5 @@\n"
        "+  fetch:\n"
        "+    command: uvx\n"
        "+    args: [mcp-server-fetch]\n"
        "+    timeout: 45\n"
        "+\n"
    ),
    ("yaml", "remove_first"): (
        "@@ -6,6 +5,0 @@\n"
        "-  # Local files: only the notes folder.\n"
        "-  filesystem:\n"
        '-    command: "npx"\n'
        '-    args: ["-y", "@modelcontextprotocol/server-filesystem", "~/notes"]\n'
        "-    timeout: 15   # seconds; large folders list slowly\n"
        "-\n"
    ),
    ("yaml", "remove_middle"): (
        "@@ -11,11 +10,0 @@\n"
        "-\n"
        "-  # GitHub through the official server.\n"
        "-  github:\n"
        "-    command: npx\n"
        "-    args:\n"
        "-      - -y\n"
        "-      - '@modelcontextprotocol/server-github'\n"
        "-    env:\n"
        '-      GITHUB_PERSONAL_ACCESS_TOKEN: "${keyring:github-pat}"  # never a literal token\n'
        "-    enabled: false\n"
        "-    # lazy: true\n"
    ),
    ("yaml", "remove_last"): (
        "@@ -29,5 +28,0 @@\n"
        "-  # Memory server for long-running chats.\n"
        "-  memory:\n"
        "-    command: npx\n"
        '-    args: [-y, "@modelcontextprotocol/server-memory"]\n'
        "-\n"
    ),
    ("yaml", "rename"): ("@@ -23 +23 @@\n-  docs:\n+  team-docs:\n"),
    ("yaml", "setting"): (
        "@@ -35 +35 @@\n"
        "-  defer_tools: 12   # I have a lot of small servers\n"
        "+  defer_tools: 30   # I have a lot of small servers\n"
    ),
}


@pytest.mark.parametrize(("ext", "edit"), sorted(EXPECTED))
def test_edit_changes_only_the_edited_lines(ext: str, edit: str, tmp_path: Path) -> None:
    source = (CORPUS / f"edit_servers.{ext}").read_text()
    path = tmp_path / ("mcp.toml" if ext == "toml" else "config.yaml")
    path.write_text(source)
    doc = ConfigDocument.load(path)
    EDITS[edit](doc, ext == "yaml")
    doc.save()
    after = path.read_text()
    assert hunks(source, after) == EXPECTED[(ext, edit)]
    # and the edited file still loads, every server valid
    config = parse_text(after, path)
    assert config.errors == ()


def test_every_edit_kind_is_covered_in_both_dialects() -> None:
    assert {edit for _, edit in EXPECTED} == set(EDITS)
    assert {ext for ext, _ in EXPECTED} == {"toml", "yaml"}


def _parses(path: Path) -> bool:
    """Corpus files that do not parse (kept for the loader's error tests) are skipped."""
    try:
        ConfigDocument.load(path)
    except (DocumentParseError, UnicodeDecodeError):
        return False
    return True


CORPUS_FILES = sorted(
    p.name for p in CORPUS.glob("*_*.*") if p.suffix in (".toml", ".yaml") and _parses(p)
)


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_loading_and_saving_unchanged_is_byte_for_byte(name: str, tmp_path: Path) -> None:
    data = (CORPUS / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(data)
    doc = ConfigDocument.load(path)
    assert not doc.changed
    doc.save()
    assert path.read_bytes() == data


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_toggling_a_server_touches_one_line_per_server(name: str) -> None:
    """Disabling every server of a corpus file: one added or changed line each."""
    source = (CORPUS / name).read_text()
    doc = ConfigDocument.from_text(source, CORPUS / name)
    names = doc.server_names()
    assert names
    changing = [server for server in names if doc.get(server, "enabled") is not False]
    for server in names:
        doc.set_enabled(server, False)
    diff = [
        line
        for line in difflib.unified_diff(source.splitlines(), doc.text().splitlines(), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    added = [line for line in diff if line.startswith("+")]
    removed = [line for line in diff if line.startswith("-")]
    assert len(added) == len(changing)
    assert all("enabled" in line for line in added)
    # a changed line (a server written as an inline table) only gained the enabled key
    stripped = {re.sub(r",\s*enabled\s*[=:]\s*false", "", line[1:]) for line in added}
    assert all(line[1:] in stripped or "enabled" in line for line in removed)
    for server in names:
        assert doc.get(server, "enabled") is False


def _servers_of(name: str) -> list[tuple[str, str]]:
    source = (CORPUS / name).read_text()
    return [
        (name, server) for server in ConfigDocument.from_text(source, CORPUS / name).server_names()
    ]


EVERY_SERVER = [pair for name in CORPUS_FILES for pair in _servers_of(name)]


@pytest.mark.parametrize(("name", "server"), EVERY_SERVER)
def test_removing_any_server_deletes_one_block_and_adds_nothing(name: str, server: str) -> None:
    source = (CORPUS / name).read_text()
    doc = ConfigDocument.from_text(source, CORPUS / name)
    others = [s for s in doc.server_names() if s != server]
    doc.remove_server(server)
    diff = list(difflib.unified_diff(source.splitlines(), doc.text().splitlines(), n=0))[2:]
    assert len([line for line in diff if line.startswith("@@")]) == 1, "\n".join(diff)
    assert not [line for line in diff if line.startswith("+")]
    removed = [line[1:] for line in diff if line.startswith("-")]
    assert any(server in line for line in removed)
    assert doc.server_names() == others
    # the other servers load exactly as before
    before = parse_text(source, CORPUS / name)
    after = parse_text(doc.text(), CORPUS / name)
    assert {s.name: s.canonical() for s in after.servers} == {
        s.name: s.canonical() for s in before.servers if s.name != server
    }


@pytest.mark.parametrize(("name", "server"), EVERY_SERVER)
def test_renaming_any_server_touches_only_its_header_lines(name: str, server: str) -> None:
    source = (CORPUS / name).read_text()
    doc = ConfigDocument.from_text(source, CORPUS / name)
    doc.rename_server(server, "renamed")
    old_lines, new_lines = source.splitlines(), doc.text().splitlines()
    assert len(old_lines) == len(new_lines)
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert changed
    for before, after in changed:
        assert server in before and after == before.replace(server, "renamed", 1)
    spec_before = parse_text(source, CORPUS / name).server(server)
    spec_after = parse_text(doc.text(), CORPUS / name).server("renamed")
    if spec_before is not None:
        assert spec_after is not None and spec_after.canonical() == spec_before.canonical()
