from tests.helpers.keyrings import memory_keyring  # noqa: F401
