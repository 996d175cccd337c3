"""The variables that must not reach a process of the sandbox's own.

bwrap, the Landlock launcher and the network bridge run before the server's rules apply,
with all of the person's rights. A dynamic-loader variable in a server's ``env`` (a
project's config may set it) would run code in them: ``LD_PRELOAD`` naming a library in
the project, ``LD_LIBRARY_PATH`` pointing at a planted libc, ``GCONV_PATH``,
``GLIBC_TUNABLES``. The rule is glibc's own for setuid programs (``unsecvars.h``: the
variables it drops for them), with macOS's ``DYLD_*``: :func:`take_late` takes them out of
the launch's environment, and the launch sets them for the server once its rules apply.
"""

from __future__ import annotations

# glibc's UNSECURE_ENVVARS (sysdeps/generic/unsecvars.h) but TMPDIR, which Portico sets
# for a Landlock server itself and which runs no code
UNSAFE = frozenset(
    {
        "GCONV_PATH",
        "GETCONF_DIR",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "LOCPATH",
        "MALLOC_TRACE",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TZDIR",
    }
)
PREFIXES = ("LD_", "DYLD_")


def is_late(name: str) -> bool:
    """A variable set only for the server, never for the launch before it."""
    return name in UNSAFE or name.startswith(PREFIXES)


def take_late(env: dict[str, str]) -> dict[str, str]:
    """Remove the late variables from ``env`` (the launch's own) and return them."""
    late = {name: env[name] for name in sorted(env) if is_late(name)}
    for name in late:
        del env[name]
    return late
