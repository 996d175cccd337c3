"""`python -m portico.runtime.sandbox.landlock_exec --read P --write P [--net MODE] -- CMD`:
apply the Landlock rules, then exec CMD. It never runs CMD without them: where Landlock
is missing it says so and exits 126."""

from __future__ import annotations

import sys

from portico.runtime.sandbox.landlock import LandlockUnavailable, exec_restricted, parse_net

USAGE = "usage: landlock_exec [--read PATH]... [--write PATH]... [--net any|none|PORTS] -- CMD"


def main(argv: list[str]) -> int:
    if "--" not in argv:
        return _usage("no '--' before the command")
    cut = argv.index("--")
    options, command = argv[:cut], argv[cut + 1 :]
    if not command:
        return _usage("no command after '--'")
    read: list[str] = []
    write: list[str] = []
    net = "any"
    while options:
        name = options.pop(0)
        if not options:
            return _usage(f"{name} needs a value")
        value = options.pop(0)
        if name == "--read":
            read.append(value)
        elif name == "--write":
            write.append(value)
        elif name == "--net":
            net = value
        else:
            return _usage(f"unknown option {name}")
    try:
        connect = parse_net(net)
    except ValueError as exc:
        return _usage(str(exc))
    try:
        exec_restricted(command, read, write, connect)
    except LandlockUnavailable as exc:
        print(f"portico sandbox: {exc}; not running {command[0]}", file=sys.stderr)
        return 126
    except OSError as exc:
        print(f"portico sandbox: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # not reached: exec replaced this process


def _usage(message: str) -> int:
    print(f"portico sandbox: {message}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
