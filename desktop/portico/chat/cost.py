"""How model cost is written for a person: ``$0.0042``, ``1.25 EUR``."""

from __future__ import annotations


def money(amount: float, currency: str) -> str:
    """Four decimals under one unit (a turn often costs a fraction of a cent), two above."""
    digits = 4 if abs(amount) < 1 else 2
    text = f"{amount:.{digits}f}"
    return f"${text}" if currency.upper() == "USD" else f"{text} {currency}"
