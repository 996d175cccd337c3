"""``portico mcp add`` and ``portico mcp import``.

Both write through ``ConfigDocument`` (comments and layout of the file survive), never
overwrite an existing server unless told to (``--replace`` on import), and check the
written file with the loader, printing any error or warning about what they wrote.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.cli.commands import Groups
from portico.cli.common import project_of

if TYPE_CHECKING:
    from portico.config.document import ConfigDocument
    from portico.config.edit_session import ConfigFiles
    from portico.config.importers import ImportResult
    from portico.config.model import Scope

ADD_EPILOG = """\
examples:
  portico mcp add everything --preset everything
  portico mcp add notes --preset filesystem --directory ~/notes
  portico mcp add tools --env API_KEY='${keyring:tools-key}' -- python -m my_tools
  portico mcp add docs --url https://docs.example.com/mcp \
      --header 'Authorization=Bearer ${env:DOCS_TOKEN}'
"""


class UsageError(Exception):
    """A command line that cannot be carried out; the message says what to change."""


def register(groups: Groups) -> None:
    from portico.config.importers import KINDS
    from portico.config.presets import PRESET_INFO

    presets = "\n".join(
        f"  {p.name:<11} {p.description} Needs {p.requires}." for p in PRESET_INFO.values()
    )
    add = groups.mcp.add_parser(
        "add",
        help="add an MCP server to a config file",
        description="Add an MCP server: a command after --, a --url, or a --preset. "
        "A preset fills in the transport details only; flags on the same line win.",
        epilog=f"presets:\n{presets}\n\n{ADD_EPILOG}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", help="the server's name (letters, digits, - and _)")
    _add_options(add, suppress=False)
    add.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND ARGS",
        help="the command that starts a local (stdio) server, after --",
    )
    add.set_defaults(handler=run_add)

    imp = groups.mcp.add_parser(
        "import",
        help="import MCP servers from another client's config",
        description="Import the MCP servers of another client. Existing servers are never "
        "overwritten without --replace. Prints what was imported, what was skipped and "
        "why, and what could not be converted.",
    )
    imp.add_argument("source", choices=KINDS, help="the client to import from")
    imp.add_argument(
        "--from",
        dest="from_path",
        type=Path,
        default=None,
        metavar="PATH",
        help="the file to read (default: the client's usual location on this platform)",
    )
    _target_options(imp)
    imp.add_argument(
        "--replace",
        action="store_true",
        help="overwrite servers that already exist (in the file defining them)",
    )
    imp.add_argument(
        "--dry-run", action="store_true", help="print what would change without writing anything"
    )
    imp.set_defaults(handler=run_import)


def _target_options(parser: argparse.ArgumentParser, default: Any = None) -> None:
    parser.add_argument(
        "--scope",
        choices=["global", "project"],
        default=default,
        help="global (your config dir; the default) or project (<project>/.portico/)",
    )
    parser.add_argument(
        "--file", type=Path, default=default, help="write to this mcp.toml or config.yaml instead"
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=default,
        metavar="DIR",
        help="project folder (default: the nearest folder from here up that has .portico/, "
        "else the current directory)",
    )


def _add_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options of ``mcp add``; with ``suppress``, absent ones stay off the Namespace."""
    none: Any = argparse.SUPPRESS if suppress else None
    _target_options(parser, none)
    parser.add_argument("--url", default=none, help="the URL of a remote (HTTP) server")
    parser.add_argument(
        "--transport",
        choices=["http", "sse"],
        default=none,
        help="remote transport: http (Streamable HTTP, the default) or sse (legacy)",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=none,
        metavar="K=V",
        help="an HTTP header (repeatable); values may be ${keyring:NAME}",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=none,
        metavar="K=V",
        help="an environment variable (repeatable); values may be references",
    )
    parser.add_argument(
        "--preset",
        default=none,
        metavar="NAME",
        help="fill in a well-known server's command (see the list below)",
    )
    parser.add_argument(
        "--directory",
        action="append",
        default=none,
        metavar="DIR",
        help="for --preset filesystem: a folder it may use (repeatable; default: the "
        "project folder)",
    )


# -- mcp add ------------------------------------------------------------------------------


def _option_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portico mcp add NAME", add_help=False, argument_default=argparse.SUPPRESS
    )
    _add_options(parser, suppress=True)
    return parser


def _split_rest(args: argparse.Namespace) -> list[str]:
    """Options written after NAME land in ``rest``: parse them, return the command.

    argparse drops a ``--`` that directly follows NAME, so a ``rest`` that does not start
    with an option is the command itself.
    """
    rest: list[str] = list(args.rest or [])
    if rest and not rest[0].startswith("-"):
        options, command = [], rest
    elif "--" in rest:
        cut = rest.index("--")
        options, command = rest[:cut], rest[cut + 1 :]
    else:
        options, command = rest, []
    if options:
        parser = _option_parser()
        later, unknown = parser.parse_known_args(options)
        if unknown:
            raise UsageError(
                f"unexpected {' '.join(unknown)!r}: put the server's command after --, "
                "for example: portico mcp add NAME -- npx -y some-server"
            )
        for key, value in vars(later).items():
            if isinstance(value, list):
                setattr(args, key, [*(getattr(args, key, None) or []), *value])
            else:
                setattr(args, key, value)
    return command


def _pairs(items: Iterable[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        colon, equals = item.find(":"), item.find("=")
        if flag == "--header" and colon > 0 and (equals < 0 or colon < equals):
            key, value = item[:colon], item[colon + 1 :].lstrip()
        elif equals > 0:
            key, value = item[:equals], item[equals + 1 :]
        else:
            raise UsageError(f"{flag} {item!r}: write it as NAME=VALUE")
        out[key.strip()] = value
    return out


def build_fields(
    *,
    command: Sequence[str] = (),
    url: str | None = None,
    preset: str | None = None,
    directories: Sequence[str] = (),
    env: Sequence[str] = (),
    headers: Sequence[str] = (),
    transport: str | None = None,
    project: Path | None = None,
) -> dict[str, Any]:
    """The neutral fields ``mcp add`` writes: the preset first, then the flags on top."""
    from portico.config.presets import PRESET_INFO, UnknownPresetError, preset_fields

    if command and url:
        raise UsageError("give either a command after -- or --url, not both")
    fields: dict[str, Any] = {}
    if preset is not None:
        try:
            fields = preset_fields(preset, directories=directories, project=project)
        except UnknownPresetError as exc:
            raise UsageError(str(exc)) from None
    if directories and (preset is None or not PRESET_INFO[preset].takes_directories):
        raise UsageError("--directory is only for presets that take folders (filesystem)")
    if directories and command:
        raise UsageError(
            f"--directory gives folders to the {preset} preset's own command, but a command "
            "after -- replaces that command: drop the command to use the preset, or drop "
            "--directory and pass the folders to your command"
        )
    if command:
        for key in ("url", "headers", "transport"):
            fields.pop(key, None)
        fields["command"] = command[0]
        fields["args"] = list(command[1:])
        if not fields["args"]:
            del fields["args"]
    elif url is not None:
        for key in ("command", "args", "env", "cwd"):
            fields.pop(key, None)
        fields["url"] = url
    if "command" not in fields and "url" not in fields:
        raise UsageError(
            "say how to reach the server: a command after -- (portico mcp add NAME -- npx "
            "-y some-server), --url URL, or --preset NAME"
        )
    remote = "url" in fields
    if env:
        if remote:
            raise UsageError("--env is for command (stdio) servers; a URL server takes --header")
        fields["env"] = {**fields.get("env", {}), **_pairs(env, "--env")}
    if headers:
        if not remote:
            raise UsageError("--header is for URL servers; a command server takes --env")
        fields["headers"] = {**fields.get("headers", {}), **_pairs(headers, "--header")}
    if transport is not None:
        if not remote:
            raise UsageError("--transport is for URL servers (a command server uses stdio)")
        if transport == "sse":
            fields["transport"] = "sse"
        else:
            fields.pop("transport", None)
    order = ("command", "args", "env", "cwd", "url", "transport", "headers")
    return {k: fields[k] for k in order if k in fields} | {
        k: v for k, v in fields.items() if k not in order
    }


def run_add(args: argparse.Namespace) -> int:
    from portico.config.document import ConflictError, DocumentParseError, EditError
    from portico.config.edit_session import refusal, refuse_read_only

    try:
        command = _split_rest(args)
        target, scope, project = _target(args)
        name: str = args.name
        _check_name(name)
        fields = build_fields(
            command=command,
            url=args.url,
            preset=args.preset,
            directories=args.directory or (),
            env=args.env or (),
            headers=args.header or (),
            transport=args.transport,
            project=project,
        )
        docs = _Documents(target, scope, project)
        where = docs.defining_file(name)
        if where is not None:
            raise UsageError(
                f"a server named {name!r} already exists in {where}; choose another name, "
                f"or remove it first with `portico mcp remove {name}`"
            )
        refuse_read_only(target)
        doc = docs.target()
        doc.add_server(name, fields)
        problems = doc.problems([name], scope)
        errors = [d for d in problems if d.is_error]
        if errors:
            raise refusal(doc, errors, f"server {name!r} would not start")
        doc.save()
    except UsageError as exc:
        print(f"portico mcp add: {exc}", file=sys.stderr)
        return 2
    except (EditError, DocumentParseError, ConflictError, OSError) as exc:
        print(f"portico mcp add: {exc}", file=sys.stderr)
        return 1
    print(f"Added {name!r} to {target}: {_summary(fields)}")
    for diagnostic in problems:
        print(diagnostic)
    _print_preset_needs(args.preset, fields)
    return 0


def _check_name(name: str) -> None:
    from portico.config.document import valid_server_name
    from portico.config.importers import to_valid_name

    problem = valid_server_name(name)
    if problem:
        raise UsageError(f"{problem}; for example {to_valid_name(name)!r}")


def _print_preset_needs(preset: str | None, fields: dict[str, Any]) -> None:
    from portico.config.presets import PRESET_INFO

    if preset is None:
        return
    info = PRESET_INFO[preset]
    if fields.get("command") == info.fields.get("command"):
        print(f"Needs {info.requires}.")
    env_text = " ".join(fields.get("env", {}).values())
    for secret in info.secrets:
        if f"${{keyring:{secret}}}" in env_text:
            print(f"Store the secret it uses: portico secret set {secret}")


def _summary(fields: dict[str, Any]) -> str:
    if "command" in fields:
        return "stdio: " + " ".join([fields["command"], *fields.get("args", [])])
    from portico.config.masking import mask_url

    return f"{fields.get('transport', 'http')}: {mask_url(fields['url'])}"


# -- where to write -----------------------------------------------------------------------


def _target(args: argparse.Namespace) -> tuple[Path, Scope, Path]:
    """(file to write, its scope, the project folder)."""
    from portico.config.model import Scope
    from portico.paths import PROJECT_DIR_NAME

    project = project_of(args)
    if args.file is not None:
        path = args.file.expanduser().resolve()
        if path.suffix.lower() not in (".toml", ".yaml", ".yml"):
            raise UsageError(f"{path}: not a config file: name it *.toml or *.yaml")
        in_project_dir = path.parent.name == PROJECT_DIR_NAME
        if in_project_dir and args.project is None:
            project = path.parent.parent
        if args.scope is not None:
            return path, Scope(args.scope), project
        return path, Scope.PROJECT if in_project_dir else Scope.GLOBAL, project
    scope = Scope(args.scope or "global")
    return _choose_file(scope, project), scope, project


def _choose_file(scope: Scope, project: Path) -> Path:
    from portico.config.targets import choose_file

    return Path(choose_file(scope, project))


def _scope_files(scope: Scope, project: Path) -> list[Path]:
    from portico.config.targets import scope_files

    return list(scope_files(scope, project))


@dataclass
class _Documents:
    """The target file plus the other files of its scope (a name defined twice in one
    scope is an error, so both are checked before adding). Names of the files not written
    come from a line scan; each file is parsed at most once."""

    path: Path
    scope: Scope
    project: Path
    files: ConfigFiles = field(init=False)

    def __post_init__(self) -> None:
        from portico.config.edit_session import ConfigFiles

        self.files = ConfigFiles(self.project)

    def open(self, path: Path) -> ConfigDocument:
        return self.files.document(path)

    def target(self) -> ConfigDocument:
        return self.open(self.path)

    def paths(self) -> list[Path]:
        siblings = _scope_files(self.scope, self.project)
        if self.path in siblings:
            return [self.path, *(p for p in siblings if p != self.path)]
        return [self.path]

    def defining_file(self, name: str) -> Path | None:
        self.target()  # the file written is parsed anyway: a parse error shows first
        for path in self.paths():
            if name in self.files.names(path):
                return path
        return None

    def changed(self) -> list[ConfigDocument]:
        loaded = self.files.loaded()
        return [self.open(p) for p in self.paths() if p in loaded and self.open(p).changed]


# -- checking what was written ------------------------------------------------------------


# -- mcp import ---------------------------------------------------------------------------


def _workspace_hint(args: argparse.Namespace, project: Path) -> str:
    """When a user-level import finds nothing but this folder has a workspace config."""
    from portico.config.importers import default_path

    if args.from_path or args.scope == "project":
        return ""
    workspace = default_path(args.source, project=project)
    if workspace is None or not workspace.is_relative_to(project):
        return ""
    return (
        f"\nThis project has its own {workspace.relative_to(project)}: import it with "
        f"`portico mcp import {args.source} --scope project`."
    )


def run_import(args: argparse.Namespace) -> int:
    from portico.config.document import ConflictError, DocumentParseError, EditError
    from portico.config.edit_session import field_problems, refuse_read_only
    from portico.config.importers import ImportSourceError, import_servers, label
    from portico.config.model import Scope

    try:
        target, scope, project = _target(args)
        for_project = scope is Scope.PROJECT
        result = import_servers(
            args.source,
            args.from_path.expanduser().resolve() if args.from_path else None,
            project=project if for_project else None,
            select="project" if for_project else "user",
        )
    except UsageError as exc:
        print(f"portico mcp import: {exc}", file=sys.stderr)
        return 2
    except ImportSourceError as exc:
        print(f"portico mcp import: {exc}{_workspace_hint(args, project)}", file=sys.stderr)
        return 1
    print(f"Read the {label(args.source)} config: {result.source}")

    docs = _Documents(target, scope, project)
    imported: list[tuple[str, str]] = []  # (name, where)
    skipped = list(result.skipped)
    try:
        for name, fields in result.servers:
            where = docs.defining_file(name)
            if where is not None and not args.replace:
                skipped.append(
                    f"{name}: already defined in {where}; pass --replace to overwrite it"
                )
                continue
            doc = docs.open(where) if where is not None else docs.target()
            errors = [d for d in field_problems(name, fields, doc.path, scope) if d.is_error]
            if errors:
                skipped.append(f"{name}: would not start: " + "; ".join(d.message for d in errors))
                continue
            try:
                doc.add_server(name, fields, replace=where is not None)
            except EditError as exc:
                skipped.append(f"{name}: {exc}")
                continue
            imported.append((name, str(doc.path) + (" (replaced)" if where else "")))
        changed = docs.changed()
        if args.dry_run:
            _print_imported(result, imported)
            _print_report(result, skipped)
            _print_diffs(changed)
            print("Dry run: nothing was written.")
            return 0
        for doc in changed:
            refuse_read_only(doc.path)
        for doc in changed:
            doc.save()
    except (EditError, DocumentParseError, ConflictError, OSError) as exc:
        print(f"portico mcp import: {exc}", file=sys.stderr)
        return 1
    _print_imported(result, imported)
    _print_report(result, skipped)
    names = [name for name, _ in imported]
    for doc in changed:
        for diagnostic in doc.problems([n for n in names if doc.has_server(n)], scope):
            print(diagnostic)
    return 0


def _print_imported(result: ImportResult, imported: list[tuple[str, str]]) -> None:
    if not imported:
        print("Imported nothing.")
        return
    print(f"Imported {len(imported)} server{'s' * (len(imported) != 1)}:")
    for name, where in imported:
        fields = result.fields(name)
        extra = []
        if name in result.renamed:
            extra.append(f"was {result.renamed[name]!r}")
        if name in result.origins:
            extra.append(f"from {result.origins[name]}")
        suffix = f"  ({'; '.join(extra)})" if extra else ""
        print(f"  + {name} -> {where}: {_summary(fields)}{suffix}")


def _print_report(result: ImportResult, skipped: list[str]) -> None:
    sections = (
        ("Skipped", skipped),
        ("Not converted as written", result.problems),
        ("Notes", result.notes),
    )
    for title, lines in sections:
        if lines:
            print(f"{title} ({len(lines)}):")
            for line in lines:
                print(f"  - {line}")
    if result.secrets:
        print("Store these secrets before the servers that use them can start:")
        for secret in result.secrets:
            what = f"{secret.description}; " if secret.description else ""
            print(f"  {secret.command()}   # {what}used by {', '.join(secret.servers)}")


def _print_diffs(docs: list[ConfigDocument]) -> None:
    for doc in docs:
        diff = difflib.unified_diff(
            doc.original_text.splitlines(keepends=True),
            doc.text().splitlines(keepends=True),
            fromfile=str(doc.path),
            tofile=str(doc.path),
        )
        sys.stdout.writelines(diff)
