"""ca_cert (a private CA for one HTTP server) in both dialects, with file:line errors."""

from __future__ import annotations

from pathlib import Path

from portico.config import Scope, load_files


def test_ca_cert_is_read_in_both_dialects(tmp_path: Path) -> None:
    toml = tmp_path / "mcp.toml"
    toml.write_text('[mcp.corp]\nurl = "https://mcp.corp.example/mcp"\nca_cert = "~/ca.pem"\n')
    yaml = tmp_path / "config.yaml"
    yaml.write_text(
        "mcp_servers:\n  corp2:\n    url: https://mcp.corp.example/mcp\n    ca_cert: /etc/ca.pem\n"
    )
    config = load_files([(toml, Scope.GLOBAL), (yaml, Scope.GLOBAL)])
    assert not config.diagnostics, [str(d) for d in config.diagnostics]
    assert config.server("corp").ca_cert == "~/ca.pem"  # type: ignore[union-attr]
    assert config.server("corp2").ca_cert == "/etc/ca.pem"  # type: ignore[union-attr]


def test_a_bad_ca_cert_names_file_line_and_key(tmp_path: Path) -> None:
    toml = tmp_path / "mcp.toml"
    toml.write_text('[mcp.corp]\nurl = "https://mcp.corp.example/mcp"\nca_cert = 3\n')
    config = load_files([(toml, Scope.GLOBAL)])
    assert [str(d) for d in config.errors] == [f"{toml}:3: corp.ca_cert: must be a string, not 3"]


def test_ca_cert_on_a_stdio_server_is_a_warning(tmp_path: Path) -> None:
    toml = tmp_path / "mcp.toml"
    toml.write_text('[mcp.local]\ncommand = ["srv"]\nca_cert = "/etc/ca.pem"\n')
    config = load_files([(toml, Scope.GLOBAL)])
    assert config.server("local") is not None
    assert config.server("local").ca_cert is None  # type: ignore[union-attr]
    assert any("local.ca_cert" in str(d) for d in config.warnings)
