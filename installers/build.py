"""Build Portico's installers. Run through ``installers/build TARGET`` (see installers/README.md).

TARGET:
  stage     only stage the project (build/stage) with briefcase.toml merged into its pyproject
  validate  stage, then let Briefcase's own parser read the app for every target
  linux     a Debian package in dist/ (dpkg-deb from a staged tree in Briefcase's layout)
  linux-briefcase   the same through ``briefcase package linux system`` (needs Briefcase's
            app template, which Briefcase downloads)
  flatpak   ``briefcase package linux flatpak`` (KDE runtime; needs flatpak-builder)
  macos     ``briefcase package macOS`` -> .dmg (on macOS)
  windows   ``briefcase package windows`` -> .msi (on Windows)
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import tomlkit

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
STAGE = BUILD / "stage"
DIST = ROOT / "dist"
APP_ID = "org.portico.portico"
PREFIX = "/usr/lib/portico"
# Debian's own interpreter: the package's bytecode and binary wheels are for its minor version.
SYSTEM_PYTHON = Path("/usr/bin/python3")
# Recommended, not required: the chat marks attachments and links with symbols (📎 🔗 🖼 📄)
# that no font of a bare Debian desktop has; Symbola (3 MB, against 10.7 MB for Noto Color
# Emoji) draws them all. The rail draws its own icons and needs no font. Same list in
# scripts/run.sh (FONTS_DEBIAN).
RECOMMENDS = ("fonts-symbola",)
SKIP_DIRS = {
    ".git",
    ".venv",
    "build",
    "dist",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
    ".hypothesis",
    ".import_linter_cache",
}

# PySide6-Essentials and -Addons ship far more of Qt than Portico loads. The unused
# modules are left out of the package; every shared object that stays is checked to
# still find its Qt libraries. QtWebEngine (MCP Apps views) needs Qml, QmlMeta,
# QmlModels, QmlWorkerScript, Quick, QuickWidgets, OpenGL, Positioning, PrintSupport and
# WebChannel, its helper process (Qt/libexec/QtWebEngineProcess) and Qt/resources: those
# stay, but for the developer tools' resources (``WEBENGINE_DEVTOOLS``) and every web engine
# locale but ``WEBENGINE_LOCALES`` (see ``_prune_webengine``).
UNUSED_QT_MODULES = (
    "QmlCompiler",
    "QmlLocalStorage",
    "QmlXmlListModel",
    "QmlNetwork",
    "LabsQmlModels",
    "Designer",
    "Help",
    "UiTools",
    "Sql",
    "Test",
    "Lottie",
    "Labs",
    "ShaderTools",
    "OpenGLWidgets",
    "Concurrent",
    "StateMachine",
    "QuickControls2",
    "QuickDialogs2",
    "QuickLayouts",
    "QuickTest",
    "QuickShapes",
    "QuickEffects",
    "QuickParticles",
    "QuickTemplates2",
    "QuickTimeline",
    "QuickVectorImage",
    "Quick3D",
    "VirtualKeyboard",
    "CanvasPainter",
    "WaylandCompositor",
    "WaylandEglCompositor",
    # from PySide6-Addons, beside QtWebEngine
    "3D",
    "Charts",
    "DataVisualization",
    "Graphs",
    "Multimedia",
    "SpatialAudio",
    "Pdf",
    "Bluetooth",
    "Nfc",
    "SerialPort",
    "SerialBus",
    "Sensors",
    "RemoteObjects",
    "Scxml",
    "TextToSpeech",
    "WebSockets",
    "WebView",
    "HttpServer",
    "Location",
    "NetworkAuth",
    "WebEngineQuick",
    "FFmpegStub",
)
# Python bindings Portico never imports whose Qt libraries stay (QtWebEngine needs them)
UNUSED_BINDINGS = ("QtQml", "QtQuick")
# FFmpeg, shipped for QtMultimedia (QtWebEngine carries its own codecs)
UNUSED_LIBS = ("libavcodec", "libavformat", "libavutil", "libswresample", "libswscale")
UNUSED_QT_DIRS = (
    "Qt/qml",
    "Qt/metatypes",
    "Qt/translations/qtdeclarative",
    "Qt/plugins/designer",
    "Qt/plugins/qmltooling",
    "Qt/plugins/qmllint",
    "Qt/plugins/sqldrivers",
    "Qt/plugins/wayland-graphics-integration-server",
    "Qt/plugins/vectorimageformats",
    "Qt/plugins/sceneparsers",
    "Qt/plugins/geometryloaders",
    "Qt/plugins/renderers",
    "Qt/plugins/renderplugins",
    "Qt/plugins/multimedia",
    "Qt/plugins/position",
    "Qt/plugins/sensors",
    "Qt/plugins/texttospeech",
    "Qt/plugins/canbus",
    "Qt/plugins/geoservices",
    "scripts",
    "include",
    "typesystems",
    "glue",
    "doc",
    "examples",
)
KEPT_LIBEXEC = ("QtWebEngineProcess",)  # Qt/libexec: the rest are build tools
# The inspector's pages: views are never given developer tools (11 MiB).
WEBENGINE_DEVTOOLS = "Qt/resources/qtwebengine_devtools_resources.pak"
# Chromium's own strings (context menu, form validation, error pages) in 53 languages,
# 42 MiB. Chromium falls back to en-US when the person's locale has no file (verified on
# 6.11 with LANG=de_DE.UTF-8: the view runs and speaks to Portico as before), and Portico's
# own interface is English: en-US only.
WEBENGINE_LOCALES_DIR = "Qt/translations/qtwebengine_locales"
WEBENGINE_LOCALES = ("en-US.pak",)


def log(text: str) -> None:
    print(f"installers/build: {text}", flush=True)


def fail(text: str) -> None:
    print(f"installers/build: {text}", file=sys.stderr)
    raise SystemExit(1)


# --- the Briefcase definition --------------------------------------------------------------


def load_toml(path: Path) -> Any:
    return tomlkit.parse(path.read_text(encoding="utf-8"))


def merged_pyproject(pyproject: Path, briefcase: Path) -> Any:
    """pyproject.toml with briefcase.toml's [tool.briefcase] merged in: the version comes
    from [project], and the app's requires must equal [project].dependencies."""
    project = load_toml(pyproject)
    brief = load_toml(briefcase)
    if "version" in brief["tool"]["briefcase"]:
        fail(f"{briefcase}: [tool.briefcase] has a version; the version is [project].version")
    deps = [str(d) for d in project["project"]["dependencies"]]
    app = brief["tool"]["briefcase"]["app"]["portico"]
    requires = [str(r) for r in app["requires"]]
    if requires != deps:
        extra = sorted(set(requires) - set(deps))
        missing = sorted(set(deps) - set(requires))
        fail(
            f"{briefcase}: [tool.briefcase.app.portico].requires differs from "
            f"pyproject.toml's [project].dependencies (missing: {missing}, extra: {extra})"
        )
    tool = project.setdefault("tool", tomlkit.table())
    briefcase_table = brief["tool"]["briefcase"]
    briefcase_table["version"] = str(project["project"]["version"])
    tool["briefcase"] = briefcase_table
    return project


def stage() -> Path:
    """A copy of the project in build/stage whose pyproject carries the Briefcase tables."""
    if STAGE.exists():
        shutil.rmtree(STAGE)
    for src in _project_files():
        dst = STAGE / src.relative_to(ROOT)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    merged = merged_pyproject(ROOT / "pyproject.toml", ROOT / "briefcase.toml")
    (STAGE / "pyproject.toml").write_text(tomlkit.dumps(merged), encoding="utf-8")
    log(f"staged {STAGE} (pyproject.toml + [tool.briefcase])")
    return STAGE


def _project_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        files = [ROOT / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk it
        files = [p for p in ROOT.rglob("*") if not SKIP_DIRS & set(p.relative_to(ROOT).parts)]
    return [p for p in files if p.is_file() and not SKIP_DIRS & set(p.relative_to(ROOT).parts)]


def version() -> str:
    return str(load_toml(ROOT / "pyproject.toml")["project"]["version"])


# --- the Debian package --------------------------------------------------------------------


def deb() -> Path:
    if not shutil.which("dpkg-deb"):
        fail("dpkg-deb is needed for the Debian package (apt-get install dpkg-dev)")
    if not SYSTEM_PYTHON.exists():
        fail(f"{SYSTEM_PYTHON} is needed: the package runs on the distribution's Python")
    stage()
    py_version = _run_out(
        [str(SYSTEM_PYTHON), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
    )
    arch = _run_out(["dpkg", "--print-architecture"])
    ver = version()
    root = BUILD / "deb" / f"portico_{ver}-1_{arch}"
    if root.exists():
        shutil.rmtree(root)
    app = root / PREFIX.lstrip("/")
    started = time.monotonic()
    shutil.copytree(
        STAGE / "desktop" / "portico",
        app / "app" / "portico",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    _install_requirements(app / "app_packages", py_version)
    _prune_qt(app / "app_packages" / "PySide6")
    _check_shared_objects(app / "app_packages")
    _launchers(root / "usr" / "bin")
    _desktop_files(root / "usr" / "share")
    _docs(root / "usr" / "share" / "doc" / "portico")
    _compile(root, app)
    size_kib = _du_kib(root)
    _control(root, ver, arch, py_version, size_kib)
    DIST.mkdir(exist_ok=True)
    out = DIST / f"portico_{ver}-1_{arch}.deb"
    log(f"packing {out.name} ({size_kib // 1024} MiB installed)")
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-Zzstd", "-z3", "--build", str(root), str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    log(f"{out} ({out.stat().st_size / 2**20:.1f} MiB) in {time.monotonic() - started:.0f} s")
    return out


def _run_out(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


def _install_requirements(target: Path, py_version: str) -> None:
    """The runtime requirements as wheels for the system Python, without bytecode (it is
    compiled below with the paths the installed files have)."""
    deps = [str(d) for d in load_toml(ROOT / "pyproject.toml")["project"]["dependencies"]]
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text("\n".join(deps) + "\n", encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--only-binary",
            ":all:",
            "--python-version",
            py_version,
            "--implementation",
            "cp",
            "--target",
            str(target),
            "-r",
            str(req),
        ]
        log(f"installing the requirements (pip --target, binary wheels for Python {py_version})")
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        noise = "WARNING: Location"  # a machine-wide find-links that does not exist here
        for line in (proc.stdout + proc.stderr).splitlines():
            if not line.startswith(noise):
                print(line)
        if proc.returncode:
            fail("pip could not install the requirements (see above)")
    for junk in target.glob("*.dist-info/RECORD"):
        junk.unlink()  # lists paths of the build machine; pip does not need it to import
    for bin_dir in (target / "bin",):
        if bin_dir.exists():
            shutil.rmtree(bin_dir)  # console scripts with the build venv's shebang


def _prune_webengine(pyside: Path) -> int:
    """What views do not need of QtWebEngine's data; KiB left out."""
    removed = 0
    devtools = pyside / WEBENGINE_DEVTOOLS
    if devtools.is_file():
        removed += devtools.stat().st_size // 1024
        devtools.unlink()
    locales = pyside / WEBENGINE_LOCALES_DIR
    for pak in sorted(locales.glob("*.pak")) if locales.is_dir() else []:
        if pak.name not in WEBENGINE_LOCALES:
            removed += pak.stat().st_size // 1024
            pak.unlink()
    return removed


def _prune_qt(pyside: Path) -> None:
    removed = _prune_webengine(pyside)
    for rel in UNUSED_QT_DIRS:
        path = pyside / rel
        if path.exists():
            removed += _du_kib(path)
            shutil.rmtree(path)
    libexec = pyside / "Qt" / "libexec"
    for tool in sorted(libexec.iterdir()) if libexec.is_dir() else []:
        if tool.name not in KEPT_LIBEXEC:
            removed += _du_kib(tool) if tool.is_dir() else tool.stat().st_size // 1024
            shutil.rmtree(tool) if tool.is_dir() else tool.unlink()
    for path in sorted(pyside.rglob("*")):
        if not path.is_file():
            continue
        name = path.name
        module = name.removeprefix("libQt6").removeprefix("Qt").split(".")[0]
        if (
            (name.startswith(("libQt6", "Qt")) and module in UNUSED_QT_MODULES)
            or any(
                name.startswith(f"libQt6{m}") or name.startswith(f"Qt{m}")
                for m in UNUSED_QT_MODULES
            )
            or name.endswith(".pyi")
            or name.startswith("libpyside6qml")
            or (path.parent == pyside and name.startswith(UNUSED_BINDINGS))
            or name.startswith(UNUSED_LIBS)
            or name in ("designer", "assistant", "linguist", "lupdate")
        ):
            removed += path.stat().st_size // 1024
            path.unlink()
    # plugins that need a library we left out are of no use to Portico either
    sys.path.insert(0, str(ROOT / "desktop"))
    from portico.cli.qt_libs import elf_dynamic

    for plugin in sorted((pyside / "Qt" / "plugins").rglob("*.so")):
        needed, runpath = elf_dynamic(plugin)
        qt = [n for n in needed if n.startswith("libQt6")]
        if any(not any((Path(d) / n).exists() for d in runpath) for n in qt):
            removed += plugin.stat().st_size // 1024
            plugin.unlink()
    log(f"left out {removed // 1024} MiB of Qt that Portico does not use")


def _check_shared_objects(packages: Path) -> None:
    """Every Qt/PySide library and plugin left in the package finds its Qt dependencies."""
    from portico.cli.qt_libs import elf_dynamic

    bad: list[str] = []
    for so in sorted(packages.rglob("*.so*")):
        if not so.is_file() or so.is_symlink():
            continue
        try:
            needed, runpath = elf_dynamic(so)
        except (ValueError, OSError):
            continue
        ours = [n for n in needed if n.startswith(("libQt6", "libpyside6", "libshiboken6"))]
        dirs = [
            *runpath,
            str(packages / "PySide6"),
            str(packages / "shiboken6"),
            str(packages / "PySide6" / "Qt" / "lib"),
        ]
        for name in ours:
            if not any((Path(d) / name).exists() for d in dirs):
                bad.append(f"{so.relative_to(packages)} needs {name}")
    if bad:
        fail("pruning Qt broke these files:\n  " + "\n  ".join(bad))


LAUNCHER = """#!{python} -I
# Portico's {what} (Debian package). -I: no user site-packages, no PYTHON* variables and
# no current folder on sys.path, so the packaged libraries are the ones imported.
import sys

sys.path[:0] = ["{prefix}/app", "{prefix}/app_packages"]
from {module} import main

sys.exit(main())
"""


def _launchers(bin_dir: Path) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, module, what in (
        ("portico", "portico.cli.main", "command line (and, without arguments, the app)"),
        ("portico-desktop", "portico.cli.desktop", "desktop app launcher"),
    ):
        path = bin_dir / name
        path.write_text(
            LAUNCHER.format(python=SYSTEM_PYTHON, prefix=PREFIX, module=module, what=what),
            encoding="utf-8",
        )
        path.chmod(0o755)


def _desktop_files(share: Path) -> None:
    resources = ROOT / "resources"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(resources / f"{APP_ID}.desktop", share / "applications" / f"{APP_ID}.desktop")
    (share / "metainfo").mkdir(parents=True)
    shutil.copy2(resources / f"{APP_ID}.metainfo.xml", share / "metainfo")
    icons = share / "icons" / "hicolor"
    for png in sorted((resources / "app").glob("portico-*.png")):
        size = png.stem.rsplit("-", 1)[1]
        if size.isdigit():
            dest = icons / f"{size}x{size}" / "apps"
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(png, dest / f"{APP_ID}.png")
    scalable = icons / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy2(resources / "portico.svg", scalable / f"{APP_ID}.svg")


def _docs(doc: Path) -> None:
    doc.mkdir(parents=True)
    licence = ROOT / "LICENSE"
    text = licence.read_text(encoding="utf-8") if licence.exists() else "License: MIT\n"
    (doc / "copyright").write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: Portico\n\nFiles: *\nCopyright: The Portico team\nLicense: MIT\n"
        + "".join(f" {line}\n" if line else " .\n" for line in text.splitlines()),
        encoding="utf-8",
    )
    changelog = (
        f"portico ({version()}-1) unstable; urgency=medium\n\n  * Release {version()}.\n\n"
        " -- The Portico team <team@portico.invalid>  "
        + time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())
        + "\n"
    )
    with gzip.open(doc / "changelog.Debian.gz", "wt", encoding="utf-8") as out:
        out.write(changelog)


def _compile(root: Path, app: Path) -> None:
    """Bytecode in the package: the installed tree is read-only for the person, so without
    it every launch compiles ~2,000 modules again (the bulk of a cold start)."""
    log("compiling bytecode with the system Python")
    subprocess.run(
        [
            str(SYSTEM_PYTHON),
            "-m",
            "compileall",
            "-q",
            "-j0",
            "-s",
            str(root),
            "-p",
            "/",
            "--invalidation-mode",
            "unchecked-hash",
            str(app),
        ],
        check=True,
    )


def _du_kib(path: Path) -> int:
    return (
        sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) // 1024
    )


def _control(root: Path, ver: str, arch: str, py_version: str, size_kib: int) -> None:
    brief = load_toml(ROOT / "briefcase.toml")["tool"]["briefcase"]
    app = brief["app"]["portico"]
    runtime = [str(p) for p in app["linux"]["system"]["debian"]["system_runtime_requires"]]
    major, minor = (int(x) for x in py_version.split("."))
    depends = [f"python3 (>= {major}.{minor})", f"python3 (<< {major}.{minor + 1})", *runtime]
    long = " " + "\n ".join(
        line if line.strip() else "." for line in str(app["long_description"]).splitlines()
    )
    control = root / "DEBIAN" / "control"
    control.parent.mkdir(parents=True)
    control.write_text(
        f"Package: portico\nVersion: {ver}-1\nArchitecture: {arch}\n"
        f"Maintainer: {brief['author']} <{brief['author_email']}>\n"
        f"Installed-Size: {size_kib}\nDepends: {', '.join(depends)}\n"
        f"Recommends: {', '.join(RECOMMENDS)}\n"
        f"Section: utils\nPriority: optional\nHomepage: {brief['url']}\n"
        f"Description: {app['description']}\n{long}\n",
        encoding="utf-8",
    )


# --- Briefcase -----------------------------------------------------------------------------


VALIDATE = """
import sys
from pathlib import Path
from briefcase.config import AppConfig, GlobalConfig, parse_config
from briefcase.console import Console
for platform, fmt in (("linux", "system"), ("linux", "flatpak"), ("macOS", "app"),
                      ("windows", "app")):
    global_config, apps = parse_config(Path("pyproject.toml"), platform=platform,
                                       output_format=fmt, console=Console())
    GlobalConfig(**global_config)
    app = AppConfig(**apps["portico"])
    print(f"briefcase {platform} {fmt}: {app.bundle_identifier} {app.version}, "
          f"{len(app.requires or [])} requirements")
"""


def briefcase_python() -> Path:
    venv = BUILD / "briefcase-venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "briefcase>=0.4"], check=True
        )
    return python


def validate() -> None:
    """Briefcase's own parser reads the staged definition for every target (no network
    beyond PyPI: the app templates are only needed to build)."""
    stage()
    proc = subprocess.run(
        [str(briefcase_python()), "-c", VALIDATE],
        cwd=STAGE,
        capture_output=True,
        text=True,
        check=False,
    )
    print(proc.stdout.strip())
    if proc.returncode != 0 or "WARNING" in proc.stdout:
        fail("Briefcase does not accept the staged pyproject.toml:\n" + proc.stdout + proc.stderr)


def briefcase(*command: str) -> None:
    """Run Briefcase in the staged project from a build venv that has it."""
    stage()
    python = briefcase_python()
    subprocess.run([str(python), "-m", "briefcase", *command, "--no-input"], cwd=STAGE, check=True)
    out = STAGE / "dist"
    if out.is_dir():
        DIST.mkdir(exist_ok=True)
        for artefact in out.iterdir():
            shutil.copy2(artefact, DIST / artefact.name)
            log(f"{DIST / artefact.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="installers/build",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target",
        choices=["stage", "validate", "linux", "linux-briefcase", "flatpak", "macos", "windows"],
    )
    args = parser.parse_args(argv)
    if args.target == "stage":
        stage()
    elif args.target == "validate":
        validate()
    elif args.target == "linux":
        print(deb())
    elif args.target == "linux-briefcase":
        briefcase("package", "linux", "system")
    elif args.target == "flatpak":
        briefcase("package", "linux", "flatpak")
    elif args.target == "macos":
        briefcase("package", "macOS", "app")
    else:
        briefcase("package", "windows", "app")
    return 0


if __name__ == "__main__":
    sys.exit(main())
