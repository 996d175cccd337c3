"""``portico config set|unset`` and ``portico mcp remove|enable|disable|rename``.

Every command edits the file in place through ``ConfigDocument`` (comments and layout
survive), writes it atomically, and when the file changed on disk meanwhile, reads it
again and retries the edit once before giving up. Each file is parsed once and the
result is validated from the edited tree before anything is written: a change that makes
the server invalid, a read-only file or a file of a newer format version is refused.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from portico.cli.commands import Groups
from portico.cli.common import add_project_option, project_of

if TYPE_CHECKING:
    from portico.config.document import ConfigDocument
    from portico.config.edit_session import ConfigFiles
    from portico.config.model import Scope

Edit = Callable[["ConfigDocument"], str]  # applies the edit, returns what to print


class CommandError(Exception):
    """A command that cannot be carried out; the message says what to do instead."""


def register(groups: Groups) -> None:
    set_ = groups.config.add_parser(
        "set",
        help="set a key of a server (SERVER.KEY VALUE), keeping the file's comments",
        description="Set a key of a server in the file that defines it. VALUE is read by "
        "the key's type: a string key (env and header values, url, cwd...) gets VALUE exactly "
        "as typed, quoted where needed; a number, duration or true/false must look like one; "
        "lists and tables are written inline in the file's dialect (TOML: "
        '["a", "b"], { A = "b" }; YAML: [a, b], {A: b}). Nested keys work: oauth.client_id, '
        "tools.include, sampling.max_rpm.",
    )
    set_.add_argument("key", metavar="SERVER.KEY", help="e.g. github.timeout, github.env.TOKEN")
    set_.add_argument("value", metavar="VALUE")
    _target_options(set_)
    set_.set_defaults(handler=run_set)

    unset = groups.config.add_parser(
        "unset", help="remove keys of a server (SERVER.KEY ...), keeping the file's comments"
    )
    unset.add_argument("keys", nargs="+", metavar="SERVER.KEY")
    _target_options(unset)
    unset.set_defaults(handler=run_unset)

    remove = groups.mcp.add_parser("remove", help="remove a server from the file defining it")
    remove.add_argument("name")
    _target_options(remove)
    remove.set_defaults(handler=run_remove)

    for verb, enabled in (("enable", True), ("disable", False)):
        toggle = groups.mcp.add_parser(
            verb, help=f"{verb} a server (written to the file that defines it)"
        )
        toggle.add_argument("name")
        _target_options(toggle)
        toggle.set_defaults(handler=run_toggle, enabled=enabled)

    rename = groups.mcp.add_parser("rename", help="rename a server in the file defining it")
    rename.add_argument("old")
    rename.add_argument("new")
    _target_options(rename)
    rename.set_defaults(handler=run_rename)


def _target_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--file", type=Path, default=None, help="edit this mcp.toml or config.yaml")
    where.add_argument(
        "--scope",
        choices=["global", "project"],
        default=None,
        help="edit the server of this scope (default: the file whose definition is in effect)",
    )
    add_project_option(parser)


# -- handlers ------------------------------------------------------------------------------


def run_set(args: argparse.Namespace) -> int:
    server, key = _split(args.key)
    text = args.value

    def edit(doc: ConfigDocument) -> str:
        doc.require_known_key(server, key)
        doc.set(server, key, doc.value_for(server, key, text))
        return f"{server}.{'.'.join(key)} set"

    return _run(args, server, edit, validate=server)


def run_unset(args: argparse.Namespace) -> int:
    by_server: dict[str, list[tuple[str, ...]]] = {}
    for server, key in (_split(k) for k in args.keys):
        by_server.setdefault(server, []).append(key)
    # Each server is edited in the file that defines it, one after the other.
    return max(_unset(args, server, keys) for server, keys in by_server.items())


def _unset(args: argparse.Namespace, server: str, keys: list[tuple[str, ...]]) -> int:
    def edit(doc: ConfigDocument) -> str:
        done: list[str] = []
        missing: list[str] = []
        for key in keys:
            (done if doc.unset(server, key) else missing).append(".".join(key))
        message = f"{server}: unset {', '.join(done)}" if done else f"{server}: nothing to unset"
        if missing:
            message += f" ({', '.join(missing)} {'was' if len(missing) == 1 else 'were'} not set)"
        return message

    return _run(args, server, edit, validate=server)


def run_remove(args: argparse.Namespace) -> int:
    name = args.name

    def edit(doc: ConfigDocument) -> str:
        doc.remove_server(name)
        return f"removed server {name}"

    return _run(args, name, edit, validate=None)


def run_toggle(args: argparse.Namespace) -> int:
    name, enabled = args.name, args.enabled

    def edit(doc: ConfigDocument) -> str:
        doc.set_enabled(name, enabled)
        return f"{'enabled' if enabled else 'disabled'} {name}"

    return _run(args, name, edit, validate=name)


def run_rename(args: argparse.Namespace) -> int:
    old, new = args.old, args.new

    def edit(doc: ConfigDocument) -> str:
        doc.rename_server(old, new)
        return f"renamed {old} to {new}"

    return _run(args, old, edit, validate=new, was=old)


# -- the shared edit path ------------------------------------------------------------------


def _split(text: str) -> tuple[str, tuple[str, ...]]:
    server, _, key = text.partition(".")
    if not server or not key or any(not part for part in key.split(".")):
        raise SystemExit(
            f"portico: {text!r} is not SERVER.KEY (e.g. github.timeout or github.env.TOKEN)"
        )
    return server, tuple(key.split("."))


def _run(
    args: argparse.Namespace,
    server: str,
    edit: Edit,
    *,
    validate: str | None,
    was: str | None = None,
) -> int:
    from portico.config.atomic import ConflictError, ReadOnlyError
    from portico.config.document import EditError
    from portico.config.edit_session import ConfigFiles

    files = ConfigFiles(project_of(args))
    try:
        path, scope = resolve_target(server, files, file=args.file, scope=args.scope)
        message = run_edit(path, scope, edit, validate=validate, was=was, files=files)
    except (CommandError, EditError, ConflictError, ReadOnlyError) as exc:
        print(f"portico: {exc}", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:  # ConfigDocument.load says "<path>: no such file"
        print(f"portico: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"portico: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{path}: {message}")
    _note_shadowing(server if validate is None else validate, path, files, was=was)
    return 0


def resolve_target(
    server: str, files: ConfigFiles, *, file: Path | None, scope: str | None
) -> tuple[Path, Scope]:
    """The file to edit for ``server`` and its scope (file names come from line scans;
    nothing is parsed unless a scan cannot tell, or no file defines the server)."""
    from portico.config.model import Scope

    if file is not None:
        path = file.resolve()
        return path, files.scope_of(path)
    wanted = Scope(scope) if scope is not None else None
    found = files.defining_files(server)
    if not found:
        files.confirm_parsed()  # a file that does not parse says so instead
        found = files.defining_files(server)
    if wanted is not None:
        candidates = [p for p in found if files.scope_of(p) is wanted]
        if not candidates:
            raise CommandError(
                f"no server named {server!r} in the {wanted.value} scope "
                f"({', '.join(str(p) for p in files.scope_files(wanted))}); "
                "add it with `portico mcp add`"
            )
    else:
        if not found:
            raise CommandError(
                f"no server named {server!r} in any config file; "
                "`portico config show` lists the servers, `portico mcp add` adds one"
            )
        effective = files.scope_of(found[0])
        candidates = [p for p in found if files.scope_of(p) is effective]
    if len(candidates) > 1:
        both = " and ".join(str(p) for p in candidates)
        raise CommandError(
            f"{server!r} is defined in both {both}; pass --file to say which one to edit"
        )
    return candidates[0], files.scope_of(candidates[0])


def run_edit(
    path: Path,
    scope: Scope,
    edit: Edit,
    *,
    validate: str | None,
    was: str | None = None,
    before_save: Callable[[ConfigDocument], None] | None = None,
    files: ConfigFiles | None = None,
) -> str:
    """Load ``path``, apply ``edit``, check it, save; on a conflict reload and retry once.

    One parse of the file, one validation of the servers the edit touched (from the
    edited tree), one write. ``validate``: a server name whose entry must not get new
    errors from the edit (``was``: its name before the edit, for a rename).
    ``before_save`` runs right before each save (tests use it to change the file).
    Raises ConflictError if the file changed again during the retry, ReadOnlyError for a
    file this user may not write, EditError (nothing written) for an invalid result.
    """
    from portico.config.atomic import ConflictError
    from portico.config.edit_session import (
        ConfigFiles,
        new_problems,
        refusal,
        refuse_read_only,
    )

    files = files or ConfigFiles(None)
    refuse_read_only(path)
    for attempt in (1, 2):
        doc = files.document(path)
        if not doc.exists_on_disk:
            raise FileNotFoundError(f"{path}: no such file")
        before = doc.problems([was or validate], scope, lines=False) if validate else []
        before = [replace(d, server=validate) for d in before]
        message = edit(doc)
        if validate is not None:
            problems = new_problems(doc, scope, [validate], before)
            if problems:
                raise refusal(doc, problems, f"the change would make server {validate!r} invalid")
        if not doc.changed:
            return f"{message} (already so; file unchanged)"
        if before_save is not None:
            before_save(doc)
        try:
            doc.save()
        except ConflictError:
            if attempt == 2:
                raise
            print(
                f"{path}: changed on disk while editing; reloaded it and retrying", file=sys.stderr
            )
            files.forget(path)
            continue
        for note in doc.notes:
            print(f"note: {note}", file=sys.stderr)
        return message
    raise AssertionError("unreachable")


def _note_shadowing(
    server: str, edited: Path, files: ConfigFiles, *, was: str | None = None
) -> None:
    """Say so when the edited definition is not the one in effect (or another remains)."""
    others = [p for p in files.defining_files(server) if p != edited]
    for other in others:
        print(f"note: {server!r} is also defined in {other}", file=sys.stderr)
