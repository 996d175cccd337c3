"""Qt item models over the hub's events."""
