"""OAuth sign-in (loopback, paste-back, device code) and secret storage."""
