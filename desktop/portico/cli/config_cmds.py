"""``portico config check|show|example``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from enum import Enum
from pathlib import Path
from typing import Any

from portico.cli.commands import Groups
from portico.cli.common import add_project_option, project_of


def register(groups: Groups) -> None:
    check = groups.config.add_parser(
        "check", help="load the config files and print every error and warning"
    )
    add_project_option(check)
    check.add_argument(
        "--file", type=Path, default=None, help="check only this file (mcp.toml or config.yaml)"
    )
    check.set_defaults(handler=run_check)

    show = groups.config.add_parser(
        "show", help="print the effective servers after the scope merge, secrets masked"
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    add_project_option(show)
    show.set_defaults(handler=run_show)

    example = groups.config.add_parser(
        "example", help="print every key with its default, commented out"
    )
    example.add_argument("what", choices=["mcp"], help="which file: mcp (the MCP servers)")
    example.add_argument(
        "--format",
        choices=["toml", "yaml"],
        default="toml",
        help="toml (mcp.toml, the default) or yaml (config.yaml)",
    )
    example.set_defaults(handler=run_example)


def run_check(args: argparse.Namespace) -> int:
    from portico.config.load import dialect_of, load, load_files
    from portico.config.model import Scope
    from portico.paths import PROJECT_DIR_NAME

    if args.file is not None:
        path: Path = args.file.resolve()
        if not path.is_file():
            print(f"{path}: no such file")
            return 1
        if dialect_of(path) is None:
            print(f"{path}: not a config file: name it *.toml or *.yaml")
            return 1
        scope = Scope.PROJECT if path.parent.name == PROJECT_DIR_NAME else Scope.GLOBAL
        config = load_files([(path, scope)])
    else:
        config = load(project_of(args))
    for diagnostic in config.diagnostics:
        print(diagnostic)
    errors, warnings = len(config.errors), len(config.warnings)
    if not config.files:
        print("no config files found (see `portico config example mcp`)")
        return 0
    skipped = sorted(
        {d.server for d in config.errors if d.server} - {s.name for s in config.servers}
    )
    summary = (
        f"{errors} error{'s' * (errors != 1)}, {warnings} warning"
        f"{'s' * (warnings != 1)}; {len(config.servers)} server"
        f"{'s' * (len(config.servers) != 1)} load"
    )
    if skipped:
        summary += f" (skipped: {', '.join(skipped)})"
    print(summary)
    return 1 if errors else 0


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def server_view(spec: Any) -> dict[str, Any]:
    """One server as shown by ``config show``: plain values, secret values masked."""
    from portico.config.masking import is_secret_key, mask_url
    from portico.config.masking import mask_value as mask

    data: dict[str, Any] = _plain(asdict(spec))
    if spec.url:
        data["url"] = mask_url(spec.url)
    source = data.pop("source")
    data["scope"] = source["scope"]
    data["source"] = {"path": source["path"], "line": source["line"], "dialect": source["dialect"]}
    data["env"] = {k: mask(v) for k, v in spec.env}
    data["headers"] = {k: mask(v) for k, v in spec.headers}
    data["tool_costs"] = {name: _plain(asdict(cost)) for name, cost in spec.tool_costs}
    if spec.oauth is not None:
        for key, value in list(data["oauth"].items()):
            if isinstance(value, str) and is_secret_key(f"oauth.{key}"):
                data["oauth"][key] = mask(value)
    if spec.identity_header is not None and spec.identity_header.value:
        data["identity_header"]["value"] = mask(spec.identity_header.value)
    if spec.client_cert is not None and spec.client_cert.password is not None:
        data["client_cert"]["password"] = mask(spec.client_cert.password)
    return data


def run_show(args: argparse.Namespace) -> int:
    from portico.config.load import load
    from portico.config.model import (
        Dialect,
        OAuthSpec,
        Scope,
        ServerSpec,
        Source,
        Transport,
    )

    config = load(project_of(args))
    views = [server_view(spec) for spec in config.servers]
    if args.json:
        print(
            json.dumps(
                {
                    "servers": views,
                    "settings": _plain(asdict(config.settings)),
                    "files": [str(p) for p in config.files],
                    "diagnostics": [
                        {**_plain(asdict(d)), "text": str(d)} for d in config.diagnostics
                    ],
                },
                indent=2,
            )
        )
        return 0
    settings = asdict(config.settings)
    print("settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    if not views:
        print("no servers configured")
    baseline = server_view(
        ServerSpec(
            name="", source=Source(Path(), 0, Scope.GLOBAL, Dialect.TOML), transport=Transport.STDIO
        )
    )
    for spec, view in zip(config.servers, views, strict=True):
        state = "enabled" if spec.enabled else "disabled"
        print(
            f"\n{spec.name}  ({view['transport']}, {state}, {view['scope']})  "
            f"{spec.source.path}:{spec.source.line}"
        )
        for key, value in view.items():
            if value is None or key in ("name", "scope", "source", "transport", "enabled"):
                continue
            default = baseline.get(key) if key != "oauth" else _plain(asdict(OAuthSpec()))
            if isinstance(value, dict) and key not in ("env", "headers", "tool_costs"):
                value = {
                    k: v
                    for k, v in value.items()
                    if v is not None and (not isinstance(default, dict) or default.get(k) != v)
                }
                if not value:
                    continue
            elif value == default:
                continue
            print(f"  {key}: {_human(value)}")
    for diagnostic in config.diagnostics:
        print(diagnostic, file=sys.stderr)
    return 0


def _human(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_human(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(str(v) for v in value) if value else "[]"
    return str(value)


def run_example(args: argparse.Namespace) -> int:
    from portico.config.example import example
    from portico.config.model import Dialect

    print(example(Dialect(args.format)), end="")
    return 0
