"""The scan: run the CLI's error paths with known secret values in the config and assert
none of them appears in any output or in any file Portico wrote (logs included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.attack import global_toml, global_yaml, portico, write

pytestmark = pytest.mark.slow  # real servers, processes or the app

URL_PASSWORD = "hunter2pass"
QUERY_TOKEN = "qk-secret-77"
HEADER_VALUE = "sk-live-AAAA1111"
NUMERIC_SECRET = "987654321"
DUP_ONE = "sk-dup-1111"
DUP_TWO = "sk-dup-2222"
ENV_VALUE = "env-secret-5555"
ADD_PASSWORD = "addpass-9999"
PROJECT_HEADER = "sk-proj-3333"
SECRETS = (
    URL_PASSWORD,
    QUERY_TOKEN,
    HEADER_VALUE,
    NUMERIC_SECRET,
    DUP_ONE,
    DUP_TWO,
    ENV_VALUE,
    ADD_PASSWORD,
    PROJECT_HEADER,
)


@pytest.fixture
def leaky_config(portico_home: Path, project: Path) -> Path:
    global_toml(
        portico_home,
        "[mcp.pw]\n"
        f'url = "http://user:{URL_PASSWORD}@127.0.0.1:9/mcp?api_key={QUERY_TOKEN}"\n'
        f'headers = {{ Authorization = "Bearer {HEADER_VALUE}" }}\n'
        "[mcp.num]\n"
        'url = "https://num.example.com/mcp"\n'
        f'oauth = {{ client_id = "c", client_secret = {NUMERIC_SECRET} }}\n'
        "[mcp.local]\n"
        'command = "definitely-not-a-command-xyz"\n'
        f'env = {{ TOKEN = "{ENV_VALUE}" }}\n'
        "[mcp.badurl]\n"
        f'url = "ftp://admin:{URL_PASSWORD}@files.example.com/"\n',
    )
    global_yaml(
        portico_home,
        "mcp_servers:\n  dup:\n    url: https://dup.example.com/mcp\n    headers:\n"
        f"      Authorization: Bearer {DUP_ONE}\n      Authorization: Bearer {DUP_TWO}\n",
    )
    write(
        project / ".portico" / "mcp.toml",
        f'[mcp.proj]\nurl = "http://127.0.0.1:9/mcp"\n'
        f'headers = {{ X-Api-Key = "{PROJECT_HEADER}" }}\n',
    )
    return project


COMMANDS: list[tuple[str, ...]] = [
    ("config", "check"),
    ("config", "show"),
    ("config", "show", "--json"),
    ("mcp", "list", "--budget", "15"),
    ("mcp", "test", "pw"),
    ("mcp", "test", "local"),
    ("mcp", "tools", "pw"),
    ("mcp", "call", "pw", "echo"),
    ("mcp", "call", "proj", "echo"),
    ("mcp", "login", "pw", "--no-browser"),
    ("mcp", "login", "num", "--no-browser"),
    ("mcp", "review"),
    ("mcp", "trust", "proj", "--once"),
    ("mcp", "test", "--url", f"http://me:{URL_PASSWORD}@127.0.0.1:9/mcp?token={QUERY_TOKEN}"),
    ("mcp", "add", "added", "--url", f"https://me:{ADD_PASSWORD}@add.example.com/mcp"),
    ("secret", "get", "NOT_THERE"),
]


def _scan(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked in {where}:\n{text}"


def _scan_files(home: Path) -> None:
    """Every file Portico wrote (logs, state, caches), except where secrets belong: the
    config files the person wrote and the secret store."""
    for path in home.rglob("*"):
        if not path.is_file() or path.is_relative_to(home / "config"):
            continue
        if "secrets" in path.parts or "mcp-tokens" in path.parts:
            continue
        _scan(path.read_text(errors="replace"), str(path))


# What each error path must show (so the scan is never vacuous): the masked forms.
EXPECTED = {
    ("config", "check"): [
        "num.oauth.client_secret: must be a string, not a number (value hidden)",
        'duplicate key "Authorization" (values not shown)',
        "'ftp://admin:***@files.example.com/'",
    ],
    ("config", "show"): ["user:***@127.0.0.1:9/mcp?api_key=***"],
    ("config", "show", "--json"): ["user:***@127.0.0.1:9/mcp?api_key=***"],
    ("mcp", "list", "--budget", "15"): ["cannot connect to http://user:***@127.0.0.1:9/mcp"],
    ("mcp", "test", "pw"): ["pw (http, http://user:***@127.0.0.1:9/mcp?api_key=***)"],
    ("mcp", "add", "added", "--url", f"https://me:{ADD_PASSWORD}@add.example.com/mcp"): [
        "https://me:***@add.example.com/mcp"
    ],
}


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:3]) for a in COMMANDS])
def test_no_secret_in_any_output_or_file(
    args: tuple[str, ...], leaky_config: Path, portico_home: Path, tmp_path: Path
) -> None:
    if args[0] == "secret":
        run = portico(portico_home, *args, cwd=leaky_config)
    else:
        run = portico(portico_home, *args, "--project", str(leaky_config), cwd=tmp_path)
    _scan(run.out + run.err, f"`portico {' '.join(args)}`")
    for shown in EXPECTED.get(args, []):
        assert shown in run.text, (shown, run.text)
    _scan_files(portico_home)
    if args[:2] == ("mcp", "test"):
        logs = [p for p in portico_home.rglob("*.log") if p.stat().st_size]
        assert logs, "the server's log file was written and scanned"
    if args[:2] == ("config", "show"):
        after = portico(portico_home, "config", "show", "--project", str(leaky_config))
        _scan(after.text, "config show after the command")
