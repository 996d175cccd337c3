"""Secret references: parsing, resolving, masking."""

from __future__ import annotations

import pytest

from portico.config import secrets
from portico.config.secrets import Reference, SecretError


async def keyring_with(values: dict[str, str]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    async def lookup(name: str) -> str | None:
        calls.append(name)
        return values.get(name)

    return lookup, calls


def test_references() -> None:
    text = "Bearer ${env:TOKEN} and ${keyring:gh.pat} and ${PLAIN}"
    assert secrets.references(text) == [
        Reference("env", "TOKEN", 7, 19),
        Reference("keyring", "gh.pat", 24, 41),
        Reference("env", "PLAIN", 46, 54),
    ]
    assert secrets.references("no refs, $5 and $$ and {braces}") == []
    assert secrets.references("$${env:LITERAL}") == []


def test_keyring_names_never_address_internal_records() -> None:
    """`/` (and ':' / '@') are not part of a secret name: ${keyring:mcp-tokens/x} is a
    config error, never a lookup of the token store."""
    for text in ("${keyring:mcp-tokens/prot}", "${keyring:a:b}", "${keyring:me@host}"):
        assert secrets.references(text) == []
        (problem,) = secrets.problems(text)
        assert "no '/'" in problem and "never reachable" in problem


def test_problems() -> None:
    assert secrets.problems("${env:OK} ${keyring:ok-1}") == []
    assert secrets.problems("${vault:x}") == [
        "'${vault:x}' names an unknown secret source 'vault': write ${env:NAME} or ${keyring:NAME}"
    ]
    assert secrets.problems("${env:}") == [
        "'${env:}' is not a valid env reference: the name is empty"
    ]
    assert secrets.problems("${env:1BAD}") == [
        "'${env:1BAD}' is not a valid env reference: the name is malformed"
    ]
    assert secrets.problems("abc ${env:X") == ["'${env:X' has no closing }"]


async def test_resolve_env_and_keyring() -> None:
    lookup, calls = await keyring_with({"gh": "ghp_secret"})
    out = await secrets.resolve(
        "Bearer ${keyring:gh}; ${env:USER_ID}; ${HOME_X}; $${env:KEEP}",
        lookup_keyring=lookup,
        environ={"USER_ID": "42", "HOME_X": "/h"},
    )
    assert out == "Bearer ghp_secret; 42; /h; ${env:KEEP}"
    assert calls == ["gh"]


async def test_resolve_plain_text_is_unchanged() -> None:
    lookup, calls = await keyring_with({})
    assert await secrets.resolve("plain", lookup_keyring=lookup, environ={}) == "plain"
    assert calls == []


async def test_missing_env_says_what_to_do() -> None:
    lookup, _ = await keyring_with({})
    with pytest.raises(SecretError) as info:
        await secrets.resolve(
            "${env:GH_TOKEN}", lookup_keyring=lookup, environ={}, where="github.env.GITHUB_TOKEN"
        )
    assert str(info.value) == (
        "github.env.GITHUB_TOKEN: environment variable GH_TOKEN is not set: set it before "
        "starting Portico, or store the value with `portico secret set GH_TOKEN` and write "
        "${keyring:GH_TOKEN}; then retry the server"
    )
    assert info.value.reference == Reference("env", "GH_TOKEN", 0, 15)
    assert info.value.where == "github.env.GITHUB_TOKEN"


async def test_missing_keyring_entry_says_what_to_run() -> None:
    lookup, _ = await keyring_with({})
    with pytest.raises(
        SecretError,
        match=r"^acme\.oauth\.client_secret: secret acme-secret is "
        r"not in the keyring: run `portico secret set acme-secret`, then retry "
        r"the server$",
    ):
        await secrets.resolve(
            "${keyring:acme-secret}", lookup_keyring=lookup, where="acme.oauth.client_secret"
        )


async def test_malformed_reference_raises() -> None:
    lookup, _ = await keyring_with({})
    with pytest.raises(SecretError, match="unknown secret source 'vault'"):
        await secrets.resolve("${vault:x}", lookup_keyring=lookup, environ={})
