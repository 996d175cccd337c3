"""Parsing a pasted redirect, and the loopback listener."""

from __future__ import annotations

import socket

import httpx2
import pytest

from portico.auth.loopback import DEFAULT_PORT, LoopbackListener, RedirectPlan, choose_port
from portico.auth.pasteback import PasteError, check_paste, parse_redirect
from portico.config.model import OAuthSpec
from tests.helpers.logs import AllowLogs


@pytest.mark.parametrize(
    "text",
    [
        "http://127.0.0.1:19876/mcp/oauth/callback?code=abc&state=s1&iss=https%3A%2F%2Fas",
        "  ?code=abc&state=s1&iss=https%3A%2F%2Fas\n",
        "code=abc&state=s1&iss=https%3A%2F%2Fas",
        "127.0.0.1:19876/mcp/oauth/callback?code=abc&state=s1&iss=https%3A%2F%2Fas",
    ],
)
def test_accepted_shapes(text: str) -> None:
    redirect = parse_redirect(text, "s1")
    assert (redirect.code, redirect.state, redirect.iss) == ("abc", "s1", "https://as")
    assert "abc" not in repr(redirect)


def test_refusals_say_why() -> None:
    assert check_paste("code=abc&state=old", "s1") == (
        "state does not match this login (was it from an older attempt?)"
    )
    assert check_paste("code=abc", "s1") == "no state= in the pasted text"
    assert check_paste("state=s1", "s1") == "no code= in the pasted text"
    assert check_paste("", "s1") == "nothing was pasted"
    with pytest.raises(PasteError, match=r"^You declined access at the provider"):
        parse_redirect("?error=access_denied&state=s1", "s1")
    with pytest.raises(PasteError, match=r"refused the sign-in: invalid_scope \(no such\)"):
        parse_redirect("?error=invalid_scope&error_description=no+such&state=s1", "s1")
    assert check_paste("code=abc&state=s1", "s1") is None


def test_plan_from_spec() -> None:
    plan = RedirectPlan.from_spec(OAuthSpec(callback_port=4567, callback_path="cb"))
    assert plan.uri_for(4567) == "http://127.0.0.1:4567/cb"
    plan = RedirectPlan.from_spec(OAuthSpec(callback_host="localhost"))
    assert plan.uri_for(1) == "http://localhost:1/mcp/oauth/callback"
    plan = RedirectPlan.from_spec(OAuthSpec(redirect_uri="https://relay.example/cb"))
    assert plan.uri_for(1) == "https://relay.example/cb"


def test_choose_port_default_then_free() -> None:
    assert choose_port(RedirectPlan.from_spec(OAuthSpec(callback_port=5555))) == 5555
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            busy.bind(("127.0.0.1", DEFAULT_PORT))
            busy.listen()
        except OSError:
            pass  # someone else holds it: the outcome is the same
        port = choose_port(RedirectPlan.from_spec(None))
        assert port != DEFAULT_PORT and port > 0


async def test_listener_moves_when_its_unfixed_port_was_taken() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        listener = LoopbackListener(RedirectPlan.from_spec(None), taken, "demo", "s1")
        await listener.start()
        try:
            assert listener.port != taken
            async with httpx2.AsyncClient() as http:
                page = await http.get(
                    f"http://127.0.0.1:{listener.port}/mcp/oauth/callback?code=c&state=s1"
                )
            assert page.status_code == 200 and "<h1>Signed in</h1>" in page.text
            assert listener.result.result().code == "c"
        finally:
            await listener.close()


async def test_listener_rejects_wrong_state_and_keeps_waiting(allow_logs: AllowLogs) -> None:
    allow_logs(r"ignored a sign-in callback that is not for this login")
    plan = RedirectPlan.from_spec(OAuthSpec(callback_path="/cb"))
    listener = LoopbackListener(plan, choose_port(plan), "demo", "right")
    await listener.start()
    try:
        base = f"http://127.0.0.1:{listener.port}"
        async with httpx2.AsyncClient() as http:
            wrong = await http.get(f"{base}/cb?code=c&state=wrong")
            abort = await http.get(f"{base}/cb?error=access_denied&state=wrong")
            other = await http.get(f"{base}/elsewhere?code=c&state=right")
            assert not listener.result.done()
            good = await http.get(f"{base}/cb?code=c2&state=right")
        assert wrong.status_code == 400 and "Not this sign-in" in wrong.text
        assert abort.status_code == 400 and "it was ignored" in abort.text
        assert other.status_code == 404
        assert good.status_code == 200
        assert listener.result.result().code == "c2"
    finally:
        await listener.close()


async def test_fixed_port_in_use_names_the_key() -> None:
    from portico.auth.loopback import ListenerError

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        plan = RedirectPlan.from_spec(OAuthSpec(callback_port=taken))
        listener = LoopbackListener(plan, taken, "demo", "s")
        with pytest.raises(ListenerError, match="callback_port"):
            await listener.start()
