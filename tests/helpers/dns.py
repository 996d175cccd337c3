"""A resolver the test controls, for DNS-pinning tests."""

from __future__ import annotations


class Dns:
    """host -> addresses, or "Name or service not known"; records every lookup."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.table:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return list(self.table[host])
