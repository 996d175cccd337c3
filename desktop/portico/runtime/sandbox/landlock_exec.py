"""Apply the Landlock rules and a seccomp filter, then exec CMD:

    python -I -S landlock_exec.py --read P --write P [--net any|none|PORTS]
        [--setenv NAME=VALUE] -- CMD

It never runs CMD without them: where Landlock (or the filter) is missing it says so and
exits 126. It imports only ``os``, ``sys`` and ``ctypes`` and never the rest of Portico,
so it runs with ``-I -S`` from its own folder (``landlock.landlock_argv``): it sits before
every server's start, and with Portico's imports it cost 55 ms of CPU a launch, this
about 16 ms, a bare interpreter 11 (docs/platform-notes.md). The syscalls are made
through libc's ``syscall(2)``.

The rules: ``--read`` paths readable and executable (``landlock_argv`` passes the system
directories and /proc this way), ``--write`` paths writable too, /dev readable and
writable (null, tty, urandom), everything else refused (EACCES). A path that does not
exist is skipped (like bwrap's ``--ro-bind-try``). ``--net none`` or ``--net PORTS``
(Landlock ABI 4) lets TCP connect to those ports only and bind none; then, since
Landlock sees only TCP, a seccomp filter refuses every other socket a server could send
through: an AF_INET / AF_INET6 socket that is not a TCP stream (UDP, ICMP, raw, SCTP,
MPTCP), every family but AF_UNIX and AF_NETLINK (AF_PACKET, AF_VSOCK, ...), and
io_uring (whose requests make sockets unseen by the filter). ``--net any`` restricts
neither (Landlock below ABI 4: the person agreed to an unfiltered network).
``--setenv`` sets a variable for CMD only, once the rules apply: the dynamic loader's
(``LD_PRELOAD`` ...), which must not reach this launcher (``loader_env.py``).

Whatever ``--net`` says, the server may not reach the person's other processes: no
signals and no abstract Unix sockets outside its domain (Landlock scopes, ABI 6; below
it signals are not scoped, and the review says so: seccomp cannot tell whose a pid is), and no
``socket(AF_UNIX)`` at all below ABI 9, where Landlock does not govern connecting to a
named socket (ssh-agent's, D-Bus's, docker.sock would all answer; ``socketpair`` stays).
From ABI 9 a named socket needs a right Portico never grants, so AF_UNIX is let through.
Another architecture's calls (i386's table, x32's) are refused in every mode.
"""

import ctypes
import os
import sys

EXEC_SCRIPT = os.path.abspath(__file__)
USAGE = (
    "usage: landlock_exec [--read PATH]... [--write PATH]... [--net any|none|PORTS] "
    "[--setenv NAME=VALUE]... -- CMD"
)
ABI_CAP_ENV = "PORTICO_LANDLOCK_ABI_MAX"
NET_ABI = 4  # TCP rules came with ABI 4 (Linux 6.7)

# The Landlock syscalls have these numbers on every architecture but alpha; socket and
# io_uring_setup are per architecture, and the seccomp filter checks the audit arch
# (linux/audit.h) of each call, so only these two are supported.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
ARCHES = {
    # machine: (AUDIT_ARCH_*, socket, io_uring_setup)
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
X32_SYSCALL_BIT = 0x40000000  # x32 calls report AUDIT_ARCH_X86_64 too: refused

# Landlock file rights (linux/landlock.h) and the ABI each came with.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV, RESOLVE_UNIX = 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16
FS_SINCE = ((1, (1 << 13) - 1), (2, REFER), (3, TRUNCATE), (5, IOCTL_DEV), (9, RESOLVE_UNIX))
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
CREATE_RULESET_VERSION = 1 << 0
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1
SCOPE_ABI = 6  # the scopes came with ABI 6 (Linux 6.12)
UNIX_ABI = 9  # RESOLVE_UNIX: connecting to a named socket is a file right

RUN = READ_FILE | READ_DIR | EXECUTE
DEVICES = READ_FILE | READ_DIR | WRITE_FILE | IOCTL_DEV
CHANGE = (  # everything but making device nodes
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_SYM
    | REFER
    | TRUNCATE
)
ON_FILE = EXECUTE | READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV  # a file takes only these

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
# classic BPF (linux/filter.h, linux/seccomp.h)
LD_ABS_W, JEQ_K, JGE_K, AND_K, RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
EPERM = 1
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (the low
# half of an argument first: both arches are little-endian)
NR, ARCH, ARG0, ARG1, ARG2 = 0, 4, 16, 24, 32
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_TYPE_MASK, IPPROTO_TCP = 1, 0xF, 6


class Unavailable(RuntimeError):
    """The kernel or machine cannot give the rules asked for."""


class _RulesetAttr(ctypes.Structure):
    # handled_access_fs, handled_access_net, scoped: a kernel with a shorter struct
    # takes this one while the fields it lacks are zero
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel's header: 12 bytes
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


_libcs: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """This process's libc, loaded when first needed (Portico imports this module on
    every system, and Windows has no ``CDLL(None)``)."""
    if not _libcs:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        libc.prctl.restype = ctypes.c_int
        _libcs.append(libc)
    return _libcs[0]


def _check(result: int, what: str) -> int:
    if result == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _syscall(nr: int, *args: object) -> int:
    wide = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return int(_libc().syscall(ctypes.c_long(nr), *wide))


def _prctl(option: int, *args: object) -> None:
    wide = [ctypes.c_ulong(a) if isinstance(a, int) else a for a in args]
    _check(_libc().prctl(option, *wide), f"prctl({option})")


def kernel_abi() -> int:
    """The kernel's Landlock ABI, or 0 where it has none (too old, disabled, not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    abi = _syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    return max(abi, 0)


def landlock_abi() -> int:
    """The ABI to count on: the kernel's, or less where ``PORTICO_LANDLOCK_ABI_MAX`` asks
    (the tests of an older kernel's fallback), 0 on an architecture not supported here."""
    if not sys.platform.startswith("linux") or os.uname().machine not in ARCHES:
        return 0
    abi = kernel_abi()
    cap = os.environ.get(ABI_CAP_ENV, "")
    return min(abi, int(cap)) if cap.isdigit() else abi


def parse_net(mode: str) -> tuple[int, ...] | None:
    """`any` -> None (TCP not restricted); `none` -> (); `443,8080` -> the ports TCP may
    connect to. Raises ValueError for anything else."""
    if mode == "any":
        return None
    if mode == "none":
        return ()
    ports = []
    for part in mode.split(","):
        if not part.strip().isdigit() or not 0 < int(part) < 65536:
            raise ValueError(f"--net takes any, none or ports like 443,8080; got {mode!r}")
        ports.append(int(part))
    return tuple(ports)


Instruction = tuple[int, int, int, int]  # code, jt, jf, k
# (op, k, if true, if false): a jump to a label, None for the next instruction
Step = tuple[str, int, str | None, str | None]


def socket_filter(machine: str, *, inet: bool = True, unix: bool = False) -> list[Instruction]:
    """The seccomp program for ``machine``: another architecture's calls kill the
    process (x32's get EPERM); io_uring gets EPERM, and an AF_UNIX socket unless
    ``unix``; with ``inet`` every other socket but a TCP stream and AF_NETLINK too
    (without it, TCP is not restricted: any other socket is allowed); anything else is
    allowed."""
    if machine not in ARCHES:
        raise Unavailable(
            f"this machine ({machine}) has no seccomp filter in Portico's sandbox "
            f"(only {', '.join(ARCHES)})"
        )
    audit_arch, nr_socket, nr_io_uring = ARCHES[machine]
    x32: list[Step] = [("jge", X32_SYSCALL_BIT, "deny", None)] if machine == "x86_64" else []
    steps: list[Step] = [
        ("ld", ARCH, None, None),
        ("jeq", audit_arch, None, "kill"),
        ("ld", NR, None, None),
        *x32,
        ("jeq", nr_io_uring, "deny", None),
        ("jeq", nr_socket, None, "allow"),
        ("ld", ARG0, None, None),  # the family
        ("jeq", AF_UNIX, "allow" if unix else "deny", None if inet else "allow"),
        ("jeq", AF_NETLINK, "allow", None),
        ("jeq", AF_INET, "inet", None),
        ("jeq", AF_INET6, "inet", "deny"),
        ("label", 0, "inet", None),
        ("ld", ARG1, None, None),  # the type, without SOCK_NONBLOCK / SOCK_CLOEXEC
        ("and", SOCK_TYPE_MASK, None, None),
        ("jeq", SOCK_STREAM, None, "deny"),
        ("ld", ARG2, None, None),  # the protocol: 0 (TCP for a stream) or TCP itself
        ("jeq", 0, "allow", None),
        ("jeq", IPPROTO_TCP, "allow", "deny"),
        ("label", 0, "allow", None),
        ("ret", RET_ALLOW, None, None),
        ("label", 0, "deny", None),
        ("ret", RET_ERRNO | EPERM, None, None),
        ("label", 0, "kill", None),
        ("ret", RET_KILL_PROCESS, None, None),
    ]
    return _assemble(steps)


def _assemble(steps: list[Step]) -> list[Instruction]:
    """Classic BPF from ``steps``: a jump's offsets count from the next instruction."""
    labels: dict[str, int] = {}
    at = 0
    for op, _, name, _ in steps:
        if op == "label":
            labels[str(name)] = at
        else:
            at += 1
    codes = {"ld": LD_ABS_W, "jeq": JEQ_K, "jge": JGE_K, "and": AND_K, "ret": RET_K}
    out: list[Instruction] = []
    for op, k, if_true, if_false in steps:
        if op == "label":
            continue
        here = len(out) + 1
        jt = labels[if_true] - here if if_true else 0
        jf = labels[if_false] - here if if_false else 0
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise Unavailable("the seccomp program's jumps do not fit")
        out.append((codes[op], jt, jf, k))
    return out


def _install_filter(machine: str, *, inet: bool, unix: bool) -> None:
    program = socket_filter(machine, inet=inet, unix=unix)
    filters = (_SockFilter * len(program))(*(_SockFilter(*ins) for ins in program))
    prog = _SockFprog(len(program), ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog))


def restrict(read: list[str], write: list[str], connect: tuple[int, ...] | None = None) -> int:
    """Apply the rules to this thread and every process it starts; returns the ABI used.
    Raises Unavailable rather than run with less than was asked for."""
    machine = os.uname().machine
    if machine not in ARCHES:
        raise Unavailable(
            f"Portico's Landlock sandbox supports {' and '.join(ARCHES)} only, "
            f"not this machine ({machine})"
        )
    abi = landlock_abi()
    if abi == 0:
        raise Unavailable("this kernel has no Landlock (Linux 5.13 or later, enabled)")
    if connect is not None and abi < NET_ABI:
        raise Unavailable(
            f"this kernel's Landlock (ABI {abi}) cannot restrict TCP; it needs ABI {NET_ABI}"
        )
    kernel = kernel_abi()
    handled = 0
    for since, rights in FS_SINCE:
        if kernel >= since:
            handled |= rights
    net = 0 if connect is None else BIND_TCP | CONNECT_TCP
    scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL if kernel >= SCOPE_ABI else 0
    attr = _RulesetAttr(handled, net, scoped)
    ruleset = _check(
        _syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0),
        "landlock_create_ruleset",
    )
    try:
        grants = [("/dev", DEVICES)]
        grants += [(path, RUN) for path in read]
        grants += [(path, RUN | CHANGE) for path in write]
        for path, access in grants:
            if not os.path.isdir(path):
                access &= ON_FILE
            access &= handled
            if access:
                _allow_path(ruleset, path, access)
        for port in connect or ():
            rule = _NetPortAttr(CONNECT_TCP, port)
            _check(
                _syscall(SYS_ADD_RULE, ruleset, RULE_NET_PORT, ctypes.byref(rule), 0),
                "landlock_add_rule",
            )
        _prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _check(_syscall(SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    _install_filter(machine, inet=connect is not None, unix=kernel >= UNIX_ABI)
    return abi


def _allow_path(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        rule = _PathBeneathAttr(access, fd)
        _check(
            _syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    if "--" not in argv:
        return _usage("no '--' before the command")
    cut = argv.index("--")
    options, command = argv[:cut], argv[cut + 1 :]
    if not command:
        return _usage("no command after '--'")
    read: list[str] = []
    write: list[str] = []
    late: list[str] = []
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
        elif name == "--setenv":
            if value.startswith("=") or "=" not in value:
                return _usage(f"--setenv takes NAME=VALUE; got {value!r}")
            late.append(value)
        else:
            return _usage(f"unknown option {name}")
    try:
        connect = parse_net(net)
    except ValueError as exc:
        return _usage(str(exc))
    try:
        restrict(read, write, connect)
        for assignment in late:
            name, _, variable = assignment.partition("=")
            os.environ[name] = variable
        os.execvp(command[0], command)
    except Unavailable as exc:
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
