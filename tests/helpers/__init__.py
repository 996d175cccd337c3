"""Helpers shared by tests in more than one package (doubles, drivers, waits)."""
