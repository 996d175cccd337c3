"""Portico: a desktop host for MCP servers."""

__version__ = "0.1.0"
APP_NAME = "portico"
