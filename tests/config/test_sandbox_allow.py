"""Allowing a refused host for a server: one entry added to its sandbox.network.allow in
the file that declares it, every other byte (comments included) kept, both dialects."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico import paths
from portico.config import load
from portico.config.sandbox_allow import allow_host


def _server(project: Path, name: str):  # type: ignore[no-untyped-def]
    spec = load(project).server(name)
    assert spec is not None
    return spec


def test_toml_gains_the_entry_and_keeps_its_comments(project: Path) -> None:
    toml = paths.paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    before = (
        '# my servers\n[mcp.t]  # the tool\ncommand = ["t"]\n\n'
        "[mcp.t.sandbox]\nenabled = true  # keep it in\n"
        'network = { allow = ["api.example.com"] }\n\n# the end\n'
    )
    toml.write_text(before)
    assert allow_host(_server(project, "t"), "tracker.example:443") == toml
    after = toml.read_text()
    assert after == before.replace(
        '["api.example.com"]', '["api.example.com", "tracker.example:443"]'
    )
    assert _server(project, "t").sandbox.network_allow == (
        "api.example.com",
        "tracker.example:443",
    )
    allow_host(_server(project, "t"), "tracker.example:443")  # there already: unchanged
    assert toml.read_text() == after


def test_yaml_project_server_gains_the_entry_and_its_review_names_it(project: Path) -> None:
    yaml = paths.project_yaml(project)
    yaml.parent.mkdir(parents=True, exist_ok=True)
    before = "# shared with the team\nmcp_servers:\n  p:\n    command: p  # ours\n"
    yaml.write_text(before)
    assert allow_host(_server(project, "p"), "api.example.com") == yaml
    text = yaml.read_text()
    assert text.startswith(before) and "api.example.com" in text
    p = _server(project, "p")
    assert p.sandbox.network_allow == ("api.example.com",)
    assert "may reach on the network: api.example.com (sandbox.network.allow)" in p.loosened


def test_a_bad_entry_names_the_server_and_key_and_writes_nothing(project: Path) -> None:
    toml = paths.paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text('[mcp.t]\ncommand = ["t"]\n')
    with pytest.raises(ValueError, match=r"t\.sandbox\.network\.allow: .*host"):
        allow_host(_server(project, "t"), "https://x.example/path")
    assert toml.read_text() == '[mcp.t]\ncommand = ["t"]\n'
