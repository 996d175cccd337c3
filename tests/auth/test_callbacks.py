"""Every OAuth callback is checked against the login's state (real oidc-provider).

Attacks and mishaps: a local process aborting or hijacking a login through the loopback
address, a person declining at the provider, a cancelled or denied re-login that must not
cost the working tokens.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from urllib.parse import urlencode

import httpx2
import pytest
from protected import ProtectedState

from portico.auth.errors import AuthError
from portico.auth.manager import AuthManager
from portico.auth.pasteback import StateMismatch, check_paste, parse_redirect
from portico.prompts import AuthorizeRequest
from tests.helpers.oauth import (
    Oidc,
    ScriptedBrowser,
    ScriptedPrompter,
    call_echo,
    cli_login,
    server_spec,
    write_config,
)


def test_state_is_checked_before_the_error() -> None:
    with pytest.raises(StateMismatch):
        parse_redirect("?error=access_denied&state=anything", "the-real-state")
    with pytest.raises(StateMismatch):
        parse_redirect("?error=access_denied", "the-real-state")
    assert check_paste("?error=access_denied&state=forged", "s") is not None  # not usable
    assert check_paste("?error=access_denied&state=s", "s") is None  # the login's answer


class ForgingPrompter(ScriptedPrompter):
    """Before the person signs in, another local process calls the loopback address."""

    answers: list[int]

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        self.answers = []
        async with httpx2.AsyncClient(timeout=10) as http:
            for query in (
                {"error": "access_denied", "state": "anything"},
                {"error": "access_denied"},
                {"code": "evil-code", "state": "anything"},
            ):
                response = await http.get(f"{request.redirect_uri}?{urlencode(query)}")
                self.answers.append(response.status_code)
        await asyncio.sleep(0.2)  # the login must still be waiting
        return await super().authorize(request)


async def test_forged_loopback_callbacks_are_ignored_and_the_login_keeps_waiting(
    oidc: Oidc, protected: ProtectedState, allow_logs: object
) -> None:
    allow_logs(r"ignored a sign-in callback that is not for this login")  # type: ignore[operator]
    prompter = ForgingPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("forged", oidc.resource)
    await manager.login(spec, browser=False)
    assert prompter.answers == [400, 400, 400]
    assert await manager.has_token(spec)
    assert await call_echo(manager, spec) == "echo: hi"


@pytest.mark.parametrize("mode", ["browser", "paste"])
async def test_consent_denial_is_one_clear_line(
    mode: str, oidc: Oidc, protected: ProtectedState
) -> None:
    prompter = ScriptedPrompter(mode=mode, browser=ScriptedBrowser(deny=True))
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec(f"denied-{mode}", oidc.resource)
    with pytest.raises(AuthError) as caught:
        await manager.login(spec, browser=False)
    assert str(caught.value) == (
        f"Signing in to 'denied-{mode}' ended: You declined access at the provider."
    )
    assert not await manager.has_token(spec)


async def test_cli_denial_is_one_line_and_no_traceback(
    oidc: Oidc, protected: ProtectedState, portico_home: Path, tmp_path: Path
) -> None:
    write_config(portico_home, oidc.resource)
    code, out, err = await cli_login(portico_home, tmp_path, deny=True)
    assert code == 1, (out, err)
    assert "Traceback" not in err and "PasteError" not in err
    lines = [line for line in err.splitlines() if line.startswith("portico: ")]
    assert lines == ["portico: Signing in to 'guarded' ended: You declined access at the provider."]


@pytest.mark.parametrize("how", ["cancel", "deny"])
async def test_a_failed_re_login_keeps_the_working_tokens(
    how: str, oidc: Oidc, protected: ProtectedState
) -> None:
    spec = server_spec(f"kept-{how}", oidc.resource)
    first = AuthManager(ScriptedPrompter(mode="browser"), endpoint_policy=None)
    await first.login(spec, browser=False)
    before = await first.storage_for(spec).raw_tokens()
    assert before is not None

    prompter = (
        ScriptedPrompter(mode="cancel")
        if how == "cancel"
        else ScriptedPrompter(mode="browser", browser=ScriptedBrowser(deny=True))
    )
    again = AuthManager(prompter, store=first.store, endpoint_policy=None)
    with pytest.raises(AuthError):
        await again.login(spec, browser=False)
    after = await again.storage_for(spec).raw_tokens()
    assert after is not None and after.access_token == before.access_token
    assert after.refresh_token == before.refresh_token
    assert await call_echo(again, spec) == "echo: hi"  # still signed in


async def test_a_successful_re_login_replaces_the_tokens(
    oidc: Oidc, protected: ProtectedState
) -> None:
    spec = server_spec("renewed", oidc.resource)
    manager = AuthManager(ScriptedPrompter(mode="browser"), endpoint_policy=None)
    await manager.login(spec, browser=False)
    before = await manager.storage_for(spec).raw_tokens()
    await manager.login(spec, browser=False)
    after = await manager.storage_for(spec).raw_tokens()
    assert before is not None and after is not None
    assert after.access_token != before.access_token


__all__ = ["sys"]
