"""``portico model list/add/test/detect``: the model providers chat and sampling use."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.cli.commands import Groups
from portico.cli.common import add_project_option, err, load_config
from portico.config.model import Config, ProviderSpec

if TYPE_CHECKING:
    from portico.auth.secret_store import SecretStore


def register(groups: Groups) -> None:
    model = groups.top.add_parser("model", help="the model providers chat and sampling use")
    actions = model.add_subparsers(dest="model_command", metavar="SUBCOMMAND", required=True)

    p = actions.add_parser("list", help="providers, their models and where they are configured")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_project_option(p)
    p.set_defaults(handler=cmd_list)

    p = actions.add_parser("add", help="add a provider to your global config")
    p.add_argument("name", help="provider name (letters, digits, - and _)")
    p.add_argument(
        "--kind",
        choices=("openai", "anthropic"),
        required=True,
        help="openai: any OpenAI-compatible server; anthropic: the Messages API",
    )
    p.add_argument("--base-url", help="the API's base URL (e.g. http://127.0.0.1:11434/v1)")
    p.add_argument(
        "--api-key-ref",
        metavar="NAME",
        help="an existing keyring secret holding the key (see `portico secret set`)",
    )
    p.add_argument("--default", metavar="MODEL", help="the provider's default model")
    p.add_argument("--models", metavar="M1,M2", help="models to offer, comma-separated")
    p.add_argument("--vision", action="store_true", help="the models take images")
    p.set_defaults(handler=cmd_add)

    p = actions.add_parser("test", help="one tiny completion: latency and the model used")
    p.add_argument("name", help="provider name")
    p.add_argument("--model", help="model to test (default: the provider's default)")
    add_project_option(p)
    p.set_defaults(handler=cmd_test)

    p = actions.add_parser(
        "detect", help="find local model servers (Ollama, LM Studio, llama.cpp) on this machine"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--add", action="store_true", help="add what answers without asking")
    p.add_argument(
        "--port",
        type=int,
        action="append",
        metavar="PORT",
        help="probe this port on 127.0.0.1 instead of the usual ones (repeatable; "
        "default: $PORTICO_DETECT_PORTS, else 11434, 1234, 8080)",
    )
    p.set_defaults(handler=cmd_detect)


def _where(spec: ProviderSpec) -> str:
    return f"{spec.source.path}:{spec.source.line}"


def cmd_list(args: argparse.Namespace) -> int:
    from portico.chat.providers.catalog import ModelCatalog

    config = load_config(args, report="all")
    catalog = ModelCatalog(config.models)
    default = catalog.default_ref
    if args.json:
        data = {
            "default": default,
            "providers": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "base_url": s.base_url,
                    "models": list(s.models),
                    "default_model": s.model,
                    "vision": s.vision,
                    "api_key": s.api_key,  # a reference, never a value
                    "source": _where(s),
                }
                for s in config.models.providers
            ],
        }
        print(json.dumps(data, indent=2))
        return 0
    if not config.models.providers:
        print(
            "No model provider is configured. Add one with `portico model add NAME --kind "
            "openai --base-url URL`, or find a local server with `portico model detect`."
        )
        return 0
    for spec in config.models.providers:
        url = spec.base_url or "(the public API)"
        key = f", key {spec.api_key}" if spec.api_key else ""
        print(f"{spec.name} ({spec.kind}) {url}{key}  — {_where(spec)}")
        names = list(dict.fromkeys([*(x for x in [spec.default_model] if x), *spec.models]))
        for name in names:
            mark = "*" if f"{spec.name}/{name}" == default else " "
            vision = " (vision)" if spec.vision else ""
            print(f"  {mark} {spec.name}/{name}{vision}")
        if not names:
            print("    (no model named: set default_model or models)")
    if default:
        print(f"Default: {default}")
    return 0


# --- add ---------------------------------------------------------------------------------


def _target() -> Path:
    """The global file that gets the provider: the one that already holds providers
    (mcp.toml first), else the file ``portico mcp add`` would write (mcp.toml, unless the
    servers are only in config.yaml)."""
    from portico import paths
    from portico.config.document import ConfigDocument, DocumentParseError
    from portico.config.model import Scope
    from portico.config.targets import choose_file

    p = paths.paths()
    for path in (p.global_toml, p.global_yaml):
        try:
            if path.exists() and ConfigDocument.load(path).get_setting(("models", "providers")):
                return path
        except (DocumentParseError, OSError):
            pass
    return choose_file(Scope.GLOBAL, None)


def cmd_add(args: argparse.Namespace) -> int:
    from portico.config.validate import server_name_problem

    name: str = args.name
    problem = server_name_problem(name)
    if problem:
        err(problem.replace("server name", "provider name"))
        return 2
    from portico.auth.secret_store import SecretStoreError
    from portico.cli.common import cli_secrets

    store = cli_secrets(load_config(args, report="none"))
    try:
        key_ref = asyncio.run(_api_key(name, args.api_key_ref, store))
    except SecretStoreError as exc:
        err(f"{exc}; nothing was changed")
        return 1
    except (KeyboardInterrupt, EOFError):
        err("cancelled; nothing was changed")
        return 1
    except ValueError as exc:
        err(str(exc))
        return 1
    fields: dict[str, Any] = {"kind": args.kind}
    if args.base_url:
        fields["base_url"] = args.base_url.rstrip("/")
    if key_ref:
        fields["api_key"] = key_ref
    models = [m.strip() for m in (args.models or "").split(",") if m.strip()]
    if models:
        fields["models"] = models
    if args.default:
        fields["default_model"] = args.default
    if args.vision:
        fields["vision"] = True
    return _write(name, fields, make_default=bool(args.default or models))


async def _api_key(name: str, ref: str | None, store: SecretStore) -> str | None:
    if ref:
        if await store.lookup_secret(ref) is None:
            raise ValueError(
                f"there is no keyring secret named {ref!r}: store it first with "
                f"`portico secret set {ref}`"
            )
        return f"${{keyring:{ref}}}"
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    value = await asyncio.to_thread(
        getpass.getpass,
        f"API key for {name} (not shown; Enter for none, as a local server needs): ",
    )
    if not value.strip():
        return None
    secret = f"{name}-api-key"
    where = await store.store_secret(secret, value.strip())
    print(f"Stored the key as {secret} in {where}.")
    return f"${{keyring:{secret}}}"


def _write(name: str, fields: dict[str, Any], *, make_default: bool) -> int:
    from portico.config import models_edit
    from portico.config.document import ConfigDocument, EditError
    from portico.config.load import load_files
    from portico.config.model import Scope

    path = _target()
    try:
        doc = ConfigDocument.open(path)
        if models_edit.provider(doc, name) is not None:
            err(
                f"{path}: a provider named {name!r} exists; remove it there first or pick "
                "another name"
            )
            return 1
        models_edit.add_provider(doc, name, fields)  # mcp.toml: a [models.providers.NAME]
        model = fields.get("default_model") or (fields.get("models") or [None])[0]
        if make_default and model and models_edit.default_model(doc) is None:
            models_edit.set_default_model(doc, f"{name}/{model}")
        problems = [d for d in doc.check().errors if (d.key or "").startswith("models")]
        if problems:
            for d in problems:
                err(str(d))
            err("nothing was written")
            return 1
        doc.save()
    except EditError as exc:
        err(str(exc))
        return 1
    except OSError as exc:
        err(f"{path}: cannot write ({exc.strerror or exc})")
        return 1
    config: Config = load_files([(path, Scope.GLOBAL)])
    for d in config.diagnostics:
        if (d.key or "").startswith(f"models.providers.{name}"):
            print(f"warning: {d}", file=sys.stderr)
    print(f"Added model provider {name} to {path}.")
    if "api_key" not in fields and fields["kind"] == "anthropic":
        print("It has no API key: store one with `portico secret set NAME` and set api_key.")
    print(f"Try it: portico model test {name}")
    return 0


# --- test and detect -------------------------------------------------------------------


def cmd_test(args: argparse.Namespace) -> int:
    from portico.chat.detect import test_provider
    from portico.chat.providers.errors import ProviderError

    config = load_config(args)
    spec = config.models.provider(args.name)
    if spec is None:
        names = ", ".join(s.name for s in config.models.providers) or "none"
        err(f"no model provider named {args.name!r} (configured: {names})")
        return 2
    try:
        report = asyncio.run(test_provider(spec, args.model))
    except ProviderError as exc:
        err(str(exc))
        return 1
    print(
        f"{spec.name}/{report.model} answered in {report.latency:.2f} s (first text after "
        f"{report.first_token:.2f} s): {report.text!r}"
    )
    return 0


def _detail_lines(details: Any) -> list[str]:
    """One line per model when the server said anything about them beyond the name."""
    if not any(m.said for m in details):
        return []
    return [f"  {m.id}: {m.detail_text}" for m in details]


def cmd_detect(args: argparse.Namespace) -> int:
    from portico.chat.detect import detect_local, probes, tried

    try:
        ports = probes(args.port)
    except ValueError as exc:
        err(str(exc))
        return 2
    found = asyncio.run(detect_local(ports))
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "label": f.label,
                        "name": f.name,
                        "base_url": f.base_url,
                        "models": list(f.models),
                        "details": [
                            {
                                "id": m.id,
                                "size": m.size,
                                "context_length": m.context_length,
                                "tools": m.tools,
                            }
                            for m in f.details
                        ],
                    }
                    for f in found
                ],
                indent=2,
            )
        )
        return 0
    if not found:
        print(
            f"No local model server answered on 127.0.0.1 (tried {tried(ports)}). Start "
            "one, or add a provider with `portico model add`."
        )
        return 1
    asks = sys.stdin.isatty() and sys.stdout.isatty() and not args.add
    for server in found:
        models = ", ".join(server.models) or "no models loaded"
        print(f"{server.label} at {server.base_url}: {models}")
        for line in _detail_lines(server.details):
            print(line)
        command = f"portico model add {server.name} --kind openai --base-url {server.base_url}"
        if server.models:
            command += f" --default {server.models[0]}"
        if not (args.add or asks):
            print(f"  add it with: {command}")
            continue
        if asks:
            answer = input(f"  Add it as '{server.name}'? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                continue
        fields: dict[str, Any] = {"kind": "openai", "base_url": server.base_url}
        if server.models:
            fields["models"] = list(server.models)
            fields["default_model"] = server.models[0]
        _write(server.name, fields, make_default=bool(server.models))
    return 0
