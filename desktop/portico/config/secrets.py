"""Secret references in config values: ``${env:VAR}``, ``${keyring:NAME}``, ``${VAR}``.

A value that holds a secret (env value, header value, ``client_secret``, cert password) may
be written as a reference. References stay as written in the model and in files; they are
resolved only at connect time, by :func:`resolve`. ``$${`` writes a literal ``${``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

ReferenceKind = Literal["env", "keyring"]
KINDS: tuple[ReferenceKind, ...] = ("env", "keyring")

# ``$${`` escapes; otherwise ``${`` opens a reference that runs to the next ``}``.
_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
# User-secret names: no '/' (nor anything else), so a reference can never address the
# internal records (OAuth tokens under ``mcp-tokens/<server>``) kept beside them.
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SecretError(Exception):
    """A reference could not be resolved (or is malformed). The message says what to do."""

    def __init__(self, message: str, *, reference: Reference | None = None, where: str = ""):
        super().__init__(message)
        self.reference = reference
        self.where = where


@dataclass(frozen=True)
class Reference:
    kind: ReferenceKind
    name: str
    start: int  # offsets of the whole ``${...}`` in the text
    end: int

    @property
    def text(self) -> str:
        return f"${{{self.kind}:{self.name}}}"


@dataclass(frozen=True)
class _Part:
    literal: str | None = None
    reference: Reference | None = None
    problem: str | None = None


def _split(text: str) -> list[_Part]:
    parts: list[_Part] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() > pos:
            parts.append(_Part(literal=text[pos : match.start()]))
        token = match.group(0)
        pos = match.end()
        if token == "$${":
            parts.append(_Part(literal="${"))
            continue
        if token == "${":
            parts.append(_Part(problem=f"'{text[match.start() :]}' has no closing }}"))
            pos = len(text)
            break
        body = match.group(1)
        kind, colon, name = body.partition(":")
        if not colon:
            kind, name = "env", body
        if kind not in KINDS:
            parts.append(
                _Part(
                    problem=f"'{token}' names an unknown secret source '{kind}': "
                    "write ${env:NAME} or ${keyring:NAME}"
                )
            )
            continue
        pattern = _ENV_NAME if kind == "env" else _NAME
        if not pattern.fullmatch(name):
            if not name:
                why = "the name is empty"
            elif kind == "keyring":
                why = (
                    "secret names use letters, digits, '_', '.' and '-' only (no '/'); "
                    "Portico's own records (sign-ins, registrations) are never reachable"
                )
            else:
                why = "the name is malformed"
            parts.append(_Part(problem=f"'{token}' is not a valid {kind} reference: {why}"))
            continue
        parts.append(_Part(reference=Reference(kind=kind, name=name, start=match.start(), end=pos)))
    if pos < len(text):
        parts.append(_Part(literal=text[pos:]))
    return parts


def references(text: str) -> list[Reference]:
    """Every well-formed reference in ``text``, in order."""
    return [p.reference for p in _split(text) if p.reference is not None]


def problems(text: str) -> list[str]:
    """What is wrong with the references in ``text`` (empty when all are well-formed)."""
    return [p.problem for p in _split(text) if p.problem is not None]


def has_references(text: str) -> bool:
    return bool(references(text))


def literal_text(text: str) -> str:
    """``text`` without its references (what would be plain text after resolving)."""
    return "".join(p.literal for p in _split(text) if p.literal is not None)


async def resolve(
    text: str,
    *,
    lookup_keyring: Callable[[str], Awaitable[str | None]],
    environ: Mapping[str, str] = os.environ,
    where: str = "",
) -> str:
    """``text`` with every reference replaced by its value.

    ``where`` names the server and key ("github.env.GITHUB_TOKEN") for messages. Raises
    :class:`SecretError` for a malformed reference, an unset variable or a missing keyring
    entry.
    """
    prefix = f"{where}: " if where else ""
    out: list[str] = []
    for part in _split(text):
        if part.problem is not None:
            raise SecretError(prefix + part.problem, where=where)
        if part.literal is not None:
            out.append(part.literal)
            continue
        ref = part.reference
        assert ref is not None
        if ref.kind == "env":
            value = environ.get(ref.name)
            if value is None:
                raise SecretError(
                    f"{prefix}environment variable {ref.name} is not set: set it before "
                    f"starting Portico, or store the value with `portico secret set "
                    f"{ref.name}` and write ${{keyring:{ref.name}}}; then retry the server",
                    reference=ref,
                    where=where,
                )
        else:
            value = await lookup_keyring(ref.name)
            if value is None:
                raise SecretError(
                    f"{prefix}secret {ref.name} is not in the keyring: run `portico secret "
                    f"set {ref.name}`, then retry the server",
                    reference=ref,
                    where=where,
                )
        out.append(value)
    return "".join(out)
