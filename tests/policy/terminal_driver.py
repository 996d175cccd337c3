"""Runs one TerminalPrompter question in a subprocess (stdin/stdout are the terminal).

Usage: python terminal_driver.py KIND  -> prints 'RESULT: <repr>' and 'TICKS: n' (how many
times a concurrent task ran while the question waited: the loop was not blocked).
"""

from __future__ import annotations

import asyncio
import sys

from portico.cli.terminal_prompter import TerminalPrompter
from portico.prompts import (
    ApprovalChoice,
    AuthorizeRequest,
    ElicitationRequest,
    SamplingMessage,
    SamplingRequest,
    SpendApprovalRequest,
    ToolApprovalRequest,
    TrustRequest,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada"},
        "age": {"type": "integer", "title": "Age"},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
        "subscribe": {"type": "boolean", "title": "Subscribe"},
    },
    "required": ["name", "age"],
}


def question(prompter: TerminalPrompter, kind: str):  # type: ignore[no-untyped-def]
    if kind in ("trust", "trust-nodns"):
        return prompter.review_trust(
            TrustRequest(
                server="docs",
                source="/p/.portico/mcp.toml:3",
                project="/p",
                transport="stdio",
                target="npx docs-server --port 1",
                env_names=("API_KEY",),
                reasons=("it is a project server that runs a command on this computer",),
                can_persist=kind == "trust",
                secrets=("env API_KEY \u2190 keyring secret DOCS_KEY",),
                trust_level="full",
                costs=("spend limit: 5 credits per chat",),
            )
        )
    if kind == "tool":
        return prompter.approve_tool(
            ToolApprovalRequest(
                server="renders",
                tool="render",
                qualified_name="renders__render",
                description="Render an image.",
                arguments={"prompt": "cat"},
                arguments_json='{\n  "prompt": "cat"\n}',
                cost_line="Costs about 20 credits.",
                reason="this tool is not marked read-only",
            )
        )
    if kind == "spend":
        return prompter.approve_spend(
            SpendApprovalRequest(
                server="renders",
                tool="render",
                qualified_name="renders__render",
                arguments_json="{}",
                cost_line="Costs about 20 credits.",
                spend_line="This chat has used about 40 credits on 'renders' (limit 50).",
                limit_line="This call would take the chat past the limit of 50 credits.",
            )
        )
    if kind == "form":
        return prompter.elicit(
            ElicitationRequest(
                server="asker",
                message="Tell me about you",
                schema=SCHEMA,
                defaults={"name": "Ada", "color": "blue"},
            )
        )
    if kind == "authorize":
        return prompter.authorize(
            AuthorizeRequest(
                server="docs",
                authorize_url="https://auth.example/authorize?client_id=x",
                redirect_uri="http://127.0.0.1:8765/mcp/oauth/callback",
                timeout=300,
                browser_opened=False,
                check_paste=lambda text: None if "code=" in text else "no code= in the pasted text",
            )
        )
    if kind == "sampling":
        return prompter.review_sampling(
            SamplingRequest(
                server="asker",
                messages=(SamplingMessage("user", "hello"),),
                system_prompt=None,
                requested_model="small",
                model="small",
                max_tokens=100,
            )
        )
    raise SystemExit(f"unknown kind {kind}")


async def main(kind: str) -> None:
    prompter = TerminalPrompter()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    tick_task = asyncio.create_task(ticker())
    try:
        result = await question(prompter, kind)
    except Exception as exc:
        result = exc
    tick_task.cancel()
    print(f"RESULT: {result!r}")
    print(f"TICKS: {ticks}")
    _ = ApprovalChoice


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
