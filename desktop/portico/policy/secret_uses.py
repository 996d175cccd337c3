"""Which of your secrets a server would receive, and where each one goes.

A trust review lists every ``${keyring:NAME}`` / ``${env:NAME}`` reference of a server
with its destination ("header X-Api-Key <- keyring secret GITHUB_PAT"), and a project
server with any reference is always reviewed, whatever its transport and address.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from portico.config.model import ServerSpec
from portico.config.secrets import references


@dataclass(frozen=True)
class SecretUse:
    destination: str  # "header X-Api-Key", "env AWS_KEY", "the URL", "oauth.client_secret"
    kind: str  # "keyring" | "env"
    name: str

    @property
    def source_text(self) -> str:
        if self.kind == "keyring":
            return f"keyring secret {self.name}"
        return f"your environment variable {self.name}"

    @property
    def line(self) -> str:
        return f"{self.destination} \u2190 {self.source_text}"


def _uses(destination: str, text: str | None) -> list[SecretUse]:
    if not text:
        return []
    return [SecretUse(destination, ref.kind, ref.name) for ref in references(text)]


def secret_uses(spec: ServerSpec) -> tuple[SecretUse, ...]:
    """Every reference ``spec`` would resolve at connect time, in config order."""
    found: list[SecretUse] = []
    for name, value in spec.env:
        found += _uses(f"env {name}", value)
    found += _uses("the URL", spec.url)
    for name, value in spec.headers:
        found += _uses(f"header {name}", value)
    if spec.oauth is not None:
        for field in fields(spec.oauth):
            value = getattr(spec.oauth, field.name)
            if isinstance(value, str):
                found += _uses(f"oauth.{field.name}", value)
    if spec.client_cert is not None:
        found += _uses("the client certificate password", spec.client_cert.password)
    if spec.identity_header is not None:
        found += _uses(f"header {spec.identity_header.name}", spec.identity_header.value)
    return tuple(found)


def secrets_reason(uses: tuple[SecretUse, ...]) -> str:
    """The reason to review; every face lists the uses themselves (``TrustRequest.secrets``)
    beside the reasons, so the reason only counts them."""
    count = len(uses)
    what = "one of your secrets" if count == 1 else f"{count} of your secrets"
    return f"it would receive {what}"
