"""Stdio servers in a sandbox: the launchers that wrap a server's command."""
