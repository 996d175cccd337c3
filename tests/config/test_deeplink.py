"""portico://add links: parsed and validated in the core; nothing written until write()."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from portico import paths
from portico.config import load
from portico.config.deeplink import (
    MAX_LINK_CHARS,
    DeepLinkError,
    is_deep_link,
    parse_add_link,
    prepare,
)

EVERYTHING = "portico://add?name=everything&command=" + quote(
    "npx -y @modelcontextprotocol/server-everything"
)


def test_a_command_link_becomes_the_same_fields_as_mcp_add() -> None:
    request = parse_add_link(EVERYTHING + "&arg=--verbose&env=LOG_LEVEL=debug")
    assert request.name == "everything"
    assert request.fields == {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-everything", "--verbose"],
        "env": {"LOG_LEVEL": "debug"},
        "from_link": True,  # reviewed before its first connect (policy.trust.is_reviewed)
    }


def test_a_url_link_with_headers_and_sse() -> None:
    link = (
        "portico://add?name=docs&url="
        + quote("https://mcp.example.com/mcp?x=1", safe="")
        + "&header="
        + quote("X-Team: blue")
        + "&transport=sse"
    )
    request = parse_add_link(link)
    assert request.fields == {
        "url": "https://mcp.example.com/mcp?x=1",
        "transport": "sse",
        "headers": {"X-Team": "blue"},
        "from_link": True,
    }
    assert is_deep_link(link) and not is_deep_link("https://example.com")


@pytest.mark.parametrize(
    ("link", "says"),
    [
        ("https://add?name=x&url=https://h", "not a portico:// link"),
        ("portico://remove?name=x", "unknown link action 'remove'"),
        ("portico://add?url=https://h", "names no server"),
        ("portico://add?name=a.b&url=https://h", "contains a dot"),
        ("portico://add?name=a__b&url=https://h", "'__'"),
        ("portico://add?name=" + "a" * 65 + "&url=https://h", "longer than 64"),
        ("portico://add?name=x", "neither command"),
        ("portico://add?name=x&url=https://h&command=ls", "both command and url"),
        ("portico://add?name=x&name=y&url=https://h", "'name' twice"),
        ("portico://add?name=x&url=https://h&evil=1", "unknown parameter 'evil'"),
        ("portico://add?name=x&url=file:///etc/passwd", "http(s) address"),
        ("portico://add?name=x&command=%22open", "does not parse"),
        ("portico://add?name=x&command=ls%0Arm", "control characters"),
        ("portico://add?name=x&command=ls&header=A:b", "header is for url servers"),
        ("portico://add?name=x&url=https://h&env=A=b", "arg and env are for command"),
        ("portico://add?name=x&command=ls&env=NOVALUE", "KEY=VALUE"),
        ("portico://add?name=x&url=https://h&transport=ws", "unknown transport"),
        ("portico://add?name=x&command=" + "a" * 3000, "at most 2048"),
        ("portico://add?name=x&command=ls" + "&arg=a" * 70, "at most 64"),
        ("portico://add?name=x&command=" + "a" * MAX_LINK_CHARS, "at most 8192"),
    ],
)
def test_malformed_or_oversized_links_get_one_clear_error(link: str, says: str) -> None:
    with pytest.raises(DeepLinkError) as caught:
        parse_add_link(link)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_prepare_shows_exactly_the_lines_write_adds() -> None:
    target = paths.paths().global_toml
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('# mine\n[mcp.old]\ncommand = ["true"]\n', encoding="utf-8")
    prepared = prepare(parse_add_link(EVERYTHING))
    assert prepared.path == target
    assert prepared.added == (
        '[mcp.everything]\ncommand = ["npx", "-y", "@modelcontextprotocol/server-everything"]\n'
        "from_link = true\n"
    )
    assert target.read_text(encoding="utf-8") == '# mine\n[mcp.old]\ncommand = ["true"]\n'
    prepared.write()
    text = target.read_text(encoding="utf-8")
    assert text.startswith('# mine\n[mcp.old]\ncommand = ["true"]\n')
    assert text.endswith(prepared.added)
    assert {s.name for s in load(None).servers} == {"old", "everything"}


def test_a_taken_name_or_an_unreadable_file_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    target = paths.paths().global_toml
    target.parent.mkdir(parents=True, exist_ok=True)
    before = '[mcp.everything]\ncommand = ["true"]\n'
    target.write_text(before, encoding="utf-8")
    with pytest.raises(DeepLinkError, match="already exists"):
        prepare(parse_add_link(EVERYTHING))
    yaml = paths.paths().global_yaml
    yaml.write_text("mcp_servers:\n  docs:\n    url: https://h/mcp\n", encoding="utf-8")
    with pytest.raises(DeepLinkError, match=r"'docs' already exists in .*config\.yaml"):
        prepare(parse_add_link("portico://add?name=docs&url=https://other/mcp"))
    assert target.read_text(encoding="utf-8") == before
    broken = tmp_path / "broken.toml"
    broken.write_text("[mcp\n", encoding="utf-8")
    with pytest.raises(DeepLinkError, match="cannot be read"):
        prepare(parse_add_link(EVERYTHING), target=broken)
    assert broken.read_text(encoding="utf-8") == "[mcp\n"
