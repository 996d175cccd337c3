"""The corpus of real-looking commented configs loads cleanly, with exact positions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from portico import paths
from portico.config import Scope, load, load_files
from portico.config.model import ClientCert, IdentityHeader, Transport, TrustLevel

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(CORPUS.glob("toml_*.toml")) + sorted(CORPUS.glob("yaml_*.yaml"))


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip().startswith(needle):
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_corpus_has_both_dialects_and_scopes() -> None:
    names = [f.name for f in FILES]
    assert sum(n.startswith("toml_") for n in names) >= 3
    assert sum(n.startswith("yaml_") for n in names) >= 3
    assert any("project" in n for n in names) and any("global" in n for n in names)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_corpus_file_loads_without_diagnostics(path: Path) -> None:
    scope = Scope.PROJECT if "project" in path.name else Scope.GLOBAL
    config = load_files([(path, scope)])
    assert config.diagnostics == (), [str(d) for d in config.diagnostics]
    assert len(config.servers) >= 3
    for spec in config.servers:
        assert spec.source.path == path and spec.source.scope is scope
        header = f"[mcp.{spec.name}]" if path.suffix == ".toml" else f"{spec.name}:"
        assert spec.source.line == line_of(path, header), spec.name


def test_toml_global_basic_details() -> None:
    config = load_files([(CORPUS / "toml_global_basic.toml", Scope.GLOBAL)])
    assert config.settings.defer_tools == 15
    github = config.server("github")
    assert github is not None and not github.enabled
    assert github.env_dict == {"GITHUB_PERSONAL_ACCESS_TOKEN": "${keyring:github-pat}"}
    memory = config.server("memory")
    assert memory is not None and memory.args == ("-y", "@modelcontextprotocol/server-memory")
    assert memory.always_load
    assert config.server("filesystem").timeout == 10.0  # type: ignore[union-attr]
    acme = config.server("acme")
    assert acme is not None and acme.oauth is not None
    assert (
        acme.oauth.client_id,
        acme.oauth.callback_port,
        acme.oauth.callback_path,
        acme.oauth.callback_host,
    ) == ("acme-client", 3118, "/callback", "localhost")
    analytics = config.server("analytics")
    assert analytics is not None and analytics.timeout == 60.0
    assert analytics.headers_dict["X-Team"] == "data"


def test_toml_project_team_details() -> None:
    config = load_files([(CORPUS / "toml_project_team.toml", Scope.PROJECT)])
    tools = config.server("payments-tools")
    assert tools is not None
    assert tools.env_dict == {"DATABASE_URL": "${env:PAYMENTS_DB_URL}", "LOG_LEVEL": "warning"}
    assert tools.connect_timeout == 20.0 and tools.trust is TrustLevel.UNTRUSTED
    assert tools.tools.include == ("list_*", "get_invoice", "search_customers")
    assert tools.tools.prompts is False
    stripe = config.server("stripe")
    assert stripe is not None
    assert stripe.tools.exclude == ("delete_customer", "refund_payment")
    sentry = config.server("sentry")
    assert sentry is not None and sentry.oauth is not None
    assert sentry.oauth.flow == "device" and sentry.oauth.timeout == 600.0


def test_toml_global_costs_details() -> None:
    config = load_files([(CORPUS / "toml_global_costs.toml", Scope.GLOBAL)])
    renders = config.server("renders")
    assert renders is not None
    assert renders.command == "render-mcp" and renders.args == ("--quality", "high")
    assert renders.tool_costs_dict["animate"].is_range
    assert renders.spend_limit == 100.0 and renders.trust is TrustLevel.FULL
    playwright = config.server("playwright")
    assert playwright is not None and playwright.lazy
    assert playwright.sampling.timeout == 45.0 and not playwright.elicitation.enabled
    wiki = config.server("wiki")
    assert wiki is not None and wiki.transport is Transport.SSE
    assert wiki.client_cert == ClientCert(
        "~/.certs/wiki.crt", "~/.certs/wiki.key", "${keyring:wiki-key-pass}"
    )


def test_yaml_corpus_details() -> None:
    basic = load_files([(CORPUS / "yaml_global_basic.yaml", Scope.GLOBAL)])
    assert basic.server("company_api").timeout == 120.0  # type: ignore[union-attr]
    assert not basic.server("legacy").enabled  # type: ignore[union-attr]
    assert basic.server("github").tools.include == (  # type: ignore[union-attr]
        "create_issue",
        "list_issues",
        "search_code",
    )
    oauth = load_files([(CORPUS / "yaml_project_oauth.yaml", Scope.PROJECT)])
    assert oauth.settings.profile == "work"
    myserver = oauth.server("myserver")
    assert myserver is not None and myserver.oauth is not None
    assert myserver.oauth.redirect_uri == "https://oauth.example.ts.net/callback"
    assert myserver.oauth.callback_host == "localhost" and myserver.oauth.timeout == 900.0
    internal = oauth.server("internal_api")
    assert internal is not None
    assert internal.identity_header == IdentityHeader("X-User-Id", "profile")
    costs = load_files([(CORPUS / "yaml_global_costs.yaml", Scope.GLOBAL)])
    assert costs.server("docs").supports_parallel_tool_calls  # type: ignore[union-attr]
    assert costs.server("ambush").events  # type: ignore[union-attr]


def test_corpus_as_installed_files_merges_scopes(project: Path) -> None:
    p = paths.paths()
    p.config_dir.mkdir(parents=True)
    shutil.copy(CORPUS / "toml_global_basic.toml", p.global_toml)
    shutil.copy(CORPUS / "yaml_global_costs.yaml", p.global_yaml)
    shutil.copy(CORPUS / "toml_project_team.toml", paths.project_toml(project))
    shutil.copy(CORPUS / "yaml_project_oauth.yaml", paths.project_yaml(project))
    config = load(project)
    # "filesystem" is in both project files: an error naming both, and it does not start;
    # "playwright" exists only globally; the global TOML filesystem is shadowed.
    assert [d.server for d in config.errors] == ["filesystem", "filesystem"]
    names = [s.name for s in config.servers]
    assert "filesystem" not in names
    assert {"github", "renders", "playwright", "linear", "stripe"} <= set(names)
    scopes = {s.name: s.source.scope for s in config.servers}
    assert scopes["github"] is Scope.GLOBAL and scopes["stripe"] is Scope.PROJECT
