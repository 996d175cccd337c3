"""Before Qt starts: can its platform plugin load here? If not, say which system libraries
are missing and the one command that installs them on this distribution.

Qt's own answer to a missing library is an abort ("Could not load the Qt platform plugin
"xcb" ...") that names one library at best. This module reads the plugin's ELF dependencies
itself (DT_NEEDED, RUNPATH, transitively) and resolves them the way the dynamic loader
does (RUNPATH, LD_LIBRARY_PATH, the ld.so cache, the default directories), without
importing PySide6, so the check costs a few milliseconds and never aborts.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# soname -> (Debian/Ubuntu, Fedora/RHEL, Arch) package
PACKAGES: dict[str, tuple[str, str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-render-util.so.0": (
        "libxcb-render-util0",
        "xcb-util-renderutil",
        "xcb-util-renderutil",
    ),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client", "wayland"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor", "wayland"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl", "wayland"),
}

# What scripts/run.sh, briefcase.toml and the README list for Debian: every package above
# that the xcb plugin (and Qt's fonts, D-Bus and EGL) need on a fresh desktop install.
DEBIAN_RUNTIME = (
    "libxcb-cursor0",
    "libxcb-icccm4",
    "libxcb-keysyms1",
    "libxcb-image0",
    "libxcb-render-util0",
    "libxcb-shape0",
    "libxcb-randr0",
    "libxcb-xkb1",
    "libxkbcommon-x11-0",
    "libx11-xcb1",
    "libegl1",
    "libgl1",
    "libfontconfig1",
    "libdbus-1-3",
)

_DEFAULT_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
)
_MAX_LIBS = 400  # a bound on the walk, far above Qt's ~60


@dataclass(frozen=True)
class Distro:
    family: str  # "debian" | "fedora" | "arch" | "unknown"
    manager: str  # the install command's program

    def command(self, packages: Sequence[str]) -> str:
        names = " ".join(packages)
        sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
        if self.family == "debian":
            return f"{sudo}apt-get install -y {names}"
        if self.family == "fedora":
            return f"{sudo}dnf install -y {names}"
        if self.family == "arch":
            return f"{sudo}pacman -S --needed {names}"
        return ""


@dataclass
class Result:
    plugin: str
    missing: list[str] = field(default_factory=list)  # sonames nobody provides

    @property
    def ok(self) -> bool:
        return not self.missing


def detect_distro(os_release: Path = Path("/etc/os-release")) -> Distro:
    ids: list[str] = []
    try:
        for line in os_release.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key in ("ID", "ID_LIKE"):
                ids += value.strip().strip('"').lower().split()
    except OSError:
        pass
    families = {
        "debian": ("debian", "ubuntu"),
        "fedora": ("fedora", "rhel", "centos", "rocky", "almalinux"),
        "arch": ("arch", "manjaro", "endeavouros"),
    }
    for family, names in families.items():
        if any(i in names for i in ids):
            return Distro(family, {"debian": "apt", "fedora": "dnf", "arch": "pacman"}[family])
    for family, tool in (("debian", "apt-get"), ("fedora", "dnf"), ("arch", "pacman")):
        if shutil.which(tool):
            return Distro(family, tool)
    return Distro("unknown", "")


def package_for(soname: str, distro: Distro) -> str | None:
    names = PACKAGES.get(soname)
    if names is None:
        return None
    index = {"debian": 0, "fedora": 1, "arch": 2}.get(distro.family)
    return None if index is None else names[index]


# --- ELF -----------------------------------------------------------------------------------


def elf_dynamic(path: Path) -> tuple[list[str], list[str]]:
    """(DT_NEEDED names, RUNPATH/RPATH entries) of a 64- or 32-bit ELF shared object.

    Reads only the headers, the dynamic section and the string table (Qt's libraries are
    tens of megabytes; a cold start cannot afford to read them whole)."""
    with path.open("rb") as handle:
        ident = handle.read(64)
        if ident[:4] != b"\x7fELF":
            raise ValueError(f"{path}: not an ELF file")
        is64 = ident[4] == 2
        end = "<" if ident[5] == 1 else ">"
        if is64:
            (phoff,) = struct.unpack_from(end + "Q", ident, 0x20)
            phentsize, phnum = struct.unpack_from(end + "HH", ident, 0x36)
        else:
            (phoff,) = struct.unpack_from(end + "I", ident, 0x1C)
            phentsize, phnum = struct.unpack_from(end + "HH", ident, 0x2A)
        handle.seek(phoff)
        headers = handle.read(phentsize * phnum)
        loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
        dynamic: tuple[int, int] | None = None
        for i in range(phnum):
            at = i * phentsize
            if is64:
                p_type, _f, off, vaddr, _p, filesz = struct.unpack_from(end + "IIQQQQ", headers, at)
            else:
                p_type, off, vaddr, _p, filesz = struct.unpack_from(end + "IIIII", headers, at)
            if p_type == 1:
                loads.append((vaddr, off, filesz))
            elif p_type == 2:
                dynamic = (off, filesz)
        if dynamic is None:
            return [], []
        handle.seek(dynamic[0])
        table = handle.read(dynamic[1])
        entry = struct.Struct(end + ("qQ" if is64 else "iI"))
        needed: list[int] = []
        paths: list[int] = []
        strtab_vaddr = strsz = 0
        for at in range(0, len(table) - entry.size + 1, entry.size):
            tag, value = entry.unpack_from(table, at)
            if tag == 0:
                break
            if tag == 1:
                needed.append(value)
            elif tag in (15, 29):  # DT_RPATH, DT_RUNPATH
                paths.append(value)
            elif tag == 5:
                strtab_vaddr = value
            elif tag == 10:
                strsz = value
        strtab = strtab_vaddr
        for vaddr, off, filesz in loads:
            if vaddr <= strtab_vaddr < vaddr + filesz:
                strtab = strtab_vaddr - vaddr + off
                break
        handle.seek(strtab)
        strings = handle.read(strsz)

    def string(offset: int) -> str:
        return strings[offset : strings.index(b"\0", offset)].decode("utf-8", "replace")

    origin = str(path.parent)
    runpath = [
        p.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
        for value in paths
        for p in string(value).split(":")
        if p
    ]
    return [string(v) for v in needed], runpath


def _ld_so_conf(path: Path, seen: set[Path]) -> list[str]:
    """The directories /etc/ld.so.conf names (following its include lines)."""
    if path in seen:
        return []
    seen.add(path)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    dirs: list[str] = []
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if line.startswith("include "):
            pattern = line.split(None, 1)[1]
            base = Path(pattern) if pattern.startswith("/") else path.parent / pattern
            for included in sorted(base.parent.glob(base.name)):
                dirs += _ld_so_conf(included, seen)
        elif line.startswith("/"):
            dirs.append(line)
    return dirs


def system_dirs(
    environ: Mapping[str, str], ld_so_conf: Path = Path("/etc/ld.so.conf")
) -> list[str]:
    """Where the loader looks: LD_LIBRARY_PATH, ld.so.conf's directories, the defaults."""
    dirs: list[str] = []
    for folder in [
        *environ.get("LD_LIBRARY_PATH", "").split(":"),
        *_ld_so_conf(ld_so_conf, set()),
        *_DEFAULT_DIRS,
    ]:
        if folder and folder not in dirs:
            dirs.append(folder)
    return dirs


def missing_libraries(plugin: Path, search: Sequence[str]) -> list[str]:
    """Sonames that ``plugin`` needs and no directory of ``search`` (after each object's
    own RUNPATH) provides, in the order they were first needed.

    The walk descends into the plugin's own libraries (those found through a RUNPATH,
    i.e. Qt's) but not into system libraries: a system library that is installed brought
    its own dependencies with it through the package manager."""
    missing: list[str] = []
    seen: set[str] = set()
    queue: list[Path] = [plugin]
    while queue and len(seen) < _MAX_LIBS:
        obj = queue.pop(0)
        try:
            needed, runpath = elf_dynamic(obj)
        except (OSError, ValueError, struct.error, IndexError):
            continue
        for name in needed:
            if name in seen:
                continue
            seen.add(name)
            bundled = _find(name, runpath)
            if bundled is not None:
                queue.append(bundled)
            elif _find(name, search) is None:
                missing.append(name)
    return missing


def _find(name: str, dirs: Iterable[str]) -> Path | None:
    for folder in dirs:
        candidate = Path(folder) / name
        if candidate.exists():
            return candidate
    return None


# --- the check -----------------------------------------------------------------------------


def qt_plugins_dir() -> Path | None:
    """PySide6's Qt/plugins, found without importing PySide6 (which would load Qt)."""
    try:
        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "Qt" / "plugins"
    return folder if folder.is_dir() else None


def plugins_to_try(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt would try here, in order; [] when none of ours is involved."""
    chosen = environ.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if chosen:
        return [chosen] if chosen in ("xcb", "wayland") else []
    order = []
    if environ.get("WAYLAND_DISPLAY"):
        order.append("wayland")
    if environ.get("DISPLAY"):
        order.append("xcb")
    return order


def check(
    environ: Mapping[str, str] | None = None,
    *,
    plugins_dir: Path | None = None,
    search: Sequence[str] | None = None,
) -> Result | None:
    """None when a platform plugin can load (or the check does not apply); else the
    Result of the plugin Qt would try first (xcb when both are possible)."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return None
    order = plugins_to_try(env)
    folder = plugins_dir or qt_plugins_dir()
    if not order or folder is None:
        return None
    dirs = list(search) if search is not None else system_dirs(env)
    results: list[Result] = []
    for name in order:
        plugin = folder / "platforms" / f"libq{name}.so"
        if not plugin.is_file():
            continue
        result = Result(name, missing_libraries(plugin, dirs))
        if result.ok:
            return None
        results.append(result)
    if not results:
        return None
    return next((r for r in results if r.plugin == "xcb"), results[0])


def message(result: Result, distro: Distro) -> str:
    """One clear message: what is missing, and the command that installs it."""
    packages: list[str] = []
    unknown: list[str] = []
    for soname in result.missing:
        package = package_for(soname, distro)
        if package is None:
            unknown.append(soname)
        elif package not in packages:
            packages.append(package)
    where = {"xcb": "X11", "wayland": "Wayland"}.get(result.plugin, result.plugin)
    lines = [
        f"portico: the desktop app cannot start: Qt's {where} platform plugin "
        f"({result.plugin}) needs system libraries that are not installed:",
        "  " + ", ".join(result.missing),
    ]
    command = distro.command(packages) if packages else ""
    if command:
        lines += ["Install them with:", f"  {command}"]
    if unknown or not command:
        lines.append(
            "Install the packages of your distribution that provide "
            + ", ".join(unknown or result.missing)
            + "."
        )
    lines.append("The CLI works without them: `portico --help`.")
    return "\n".join(lines)
