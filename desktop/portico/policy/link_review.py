"""What the confirmation of a ``portico://add`` link lists before anything is written.

Both faces (the app's dialog and ``portico --open-url`` in a terminal) show the same
lines, each whole: where requests would go (the origin, with the site first and its
punycode form, from :mod:`portico.policy.url_review`), or the command it would run; each
of your secrets it would receive (``header Authorization ← keyring secret GITHUB_PAT``);
each environment value and header as written (a reference by name, never its value); and
that the server waits for a trust review before its first connect.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from portico.config.deeplink import Prepared
from portico.config.model import ServerSpec, Transport
from portico.policy.secret_uses import secret_uses
from portico.policy.url_review import UrlReview, review_url

PENDING = (
    "It is added switched on but waits for your trust review (the same as a project "
    "server's) before it first connects or runs anything."
)


@dataclass(frozen=True)
class LinkReview:
    target: tuple[str, ...]  # "sends requests to https://x:443" + the URL review's lines
    secrets: tuple[str, ...]  # "header Authorization ← keyring secret GITHUB_PAT"
    values: tuple[str, ...]  # "env NODE_OPTIONS = --require x.js", "header X = v"
    url: UrlReview | None = None
    pending: str = PENDING

    def lines(self) -> tuple[str, ...]:
        """Every line, for a terminal: the target, the secrets, the values, pending."""
        out = list(self.target)
        if self.secrets:
            out.append("It would receive these secrets of yours:")
            out += [f"  {line}" for line in self.secrets]
        else:
            out.append("It would receive none of your secrets.")
        if self.values:
            out.append("It would get these values, as written:")
            out += [f"  {line}" for line in self.values]
        out.append(self.pending)
        return tuple(out)


def review_link(prepared: Prepared) -> LinkReview:
    spec = prepared.spec
    if spec is None:  # prepare() refuses a link whose server would not load
        raise ValueError(f"the link's server {prepared.request.name!r} did not load")
    return review_spec(spec)


def review_spec(spec: ServerSpec) -> LinkReview:
    secrets = tuple(use.line for use in secret_uses(spec))
    if spec.transport is Transport.STDIO:
        target: tuple[str, ...] = (
            f"It runs on this computer: {shlex.join([spec.command or '', *spec.args])}",
        )
        values = tuple(f"env {name} = {value}" for name, value in spec.env)
        return LinkReview(target, secrets, values)
    review = review_url(spec.url or "")
    what = "server-sent events" if spec.transport is Transport.SSE else "requests"
    target = (f"It sends {what} to {review.origin or review.shown_url}", *review.lines())
    values = tuple(f"header {name} = {value}" for name, value in spec.headers)
    return LinkReview(target, secrets, values, review)
