"""Prove the Debian package on this machine: build, install, validate, launch, link, quit.

Run through ``installers/check`` (installers/README.md). Steps, each printed:
 1. Briefcase's parser reads the staged app definition for every target; build the .deb
    (``installers/build linux``) unless --deb names one;
 2. install it: ``apt-get install ./portico.deb`` as root (its Depends come from Debian),
    else ``dpkg -x`` into a scratch root;
 3. desktop-file-validate and appstreamcli validate on the installed files, and the
    x-scheme-handler/portico registration in the desktop database;
 4. start the installed launcher under Xvfb (QT_QPA_PLATFORM=xcb), wait for the window
    (xdotool): cold (first launch, page cache dropped) and warm;
 5. screenshot to docs/screenshots/installers-first-launch.png;
 6. a second launch with a portico://add link: the confirmation dialog appears in the
    running app (screenshot installers-deeplink.png), Add writes the server;
 7. quit with Ctrl+Q, as a person would, and check the exit code;
 8. print the package size and the launch times.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from launch_timing import Xvfb, drop_caches, find_window, launch, prioritised, quit_app

ROOT = Path(__file__).resolve().parent.parent
APP_ID = "org.portico.portico"
TOOLS = {  # command -> Debian package
    "Xvfb": "xvfb",
    "xdotool": "xdotool",
    "desktop-file-validate": "desktop-file-utils",
    "appstreamcli": "appstream",
    "import": "imagemagick",
    "dpkg-deb": "dpkg",
}
LINK = "portico://add?name=hello-link&command=" + quote("/usr/bin/env true") + "&env=A=1"


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def fail(text: str) -> None:
    print(f"installers/check: FAILED: {text}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def ensure_tools() -> None:
    missing = {cmd: pkg for cmd, pkg in TOOLS.items() if shutil.which(cmd) is None}
    if not missing:
        return
    packages = sorted(set(missing.values()))
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {' '.join(packages)} (apt-get)")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(
            ["apt-get", "install", "-y", "-q", *packages],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
    else:
        fail(
            f"missing {', '.join(missing)}: install them with "
            f"sudo apt-get install -y {' '.join(packages)}"
        )


class Installed:
    """Where the package's files are, and how to run its launcher."""

    def __init__(self, root: Path, system: bool) -> None:
        self.root = root  # "/" for a real install, else the scratch root
        self.system = system

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def launcher(self, *args: str) -> list[str]:
        if self.system:
            return ["/usr/bin/portico-desktop", *args]
        app = self.path("/usr/lib/portico")
        code = (
            "import sys; "
            f"sys.path[:0] = ['{app}/app', '{app}/app_packages']; "
            "from portico.cli.desktop import main; sys.argv[0] = 'portico-desktop'; "
            "sys.exit(main())"
        )
        return ["/usr/bin/python3", "-I", "-c", code, *args]


def install(deb: Path, scratch: bool) -> Installed:
    if not scratch and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "--reinstall", str(deb)],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        status = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Status} ${Version}", "portico"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        print(f"apt-get install {deb.name}: {status}")
        return Installed(Path("/"), system=True)
    root = Path(tempfile.mkdtemp(prefix="portico-root-"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    print(f"dpkg -x {deb.name} -> {root} (its Depends are not installed this way)")
    return Installed(root, system=False)


def validate(installed: Installed) -> None:
    desktop = installed.path(f"/usr/share/applications/{APP_ID}.desktop")
    metainfo = installed.path(f"/usr/share/metainfo/{APP_ID}.metainfo.xml")
    for path in (
        desktop,
        metainfo,
        installed.path("/usr/bin/portico-desktop"),
        installed.path(f"/usr/share/icons/hicolor/256x256/apps/{APP_ID}.png"),
        installed.path(f"/usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg"),
    ):
        if not path.is_file():
            fail(f"{path} is not in the package")
    for cmd in (
        ["desktop-file-validate", str(desktop)],
        ["appstreamcli", "validate", "--no-net", str(metainfo)],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        print(f"{cmd[0]}: {'ok' if proc.returncode == 0 else 'FAILED'}")
        out = (proc.stdout + proc.stderr).strip()
        if out:
            print("  " + out.replace("\n", "\n  "))
        if proc.returncode != 0:
            fail(f"{cmd[0]} rejected {cmd[-1]}")
    if installed.system:
        cache = Path("/usr/share/applications/mimeinfo.cache").read_text(encoding="utf-8")
        line = next(
            (x for x in cache.splitlines() if x.startswith("x-scheme-handler/portico=")), None
        )
        if line is None or f"{APP_ID}.desktop" not in line:
            fail("x-scheme-handler/portico is not registered in mimeinfo.cache")
        print(f"desktop database: {line}")


def screenshot(display: str, name: str, window: str) -> Path:
    """The screen, cropped to the main window (dialogs open over it)."""
    out = ROOT / "docs" / "screenshots" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    shape = dict(
        line.split("=", 1)
        for line in xdotool(display, "getwindowgeometry", "--shell", window).split()
    )
    crop = f"{shape['WIDTH']}x{shape['HEIGHT']}+{shape['X']}+{shape['Y']}"
    subprocess.run(
        ["import", "-display", display, "-window", "root", "-crop", crop, "+repage", str(out)],
        check=True,
    )
    print(f"screenshot: {out.relative_to(ROOT)}")
    return out


def wait_for(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    fail(f"timed out after {timeout:.0f} s waiting for {what}")


def xdotool(display: str, *args: str) -> str:
    return subprocess.run(
        ["xdotool", *args],
        env=dict(os.environ, DISPLAY=display),
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()


def said(trace: dict[str, float]) -> str:
    """The app's phases (seconds since the launch, and its CPU time then)."""
    phases = ("QApplication", "show", "first paint", "chats ready", "config applied")
    parts = [
        f"{name} {trace[name]:.3f} s (cpu {trace[name + ' cpu']:.3f})"
        for name in phases
        if name in trace
    ]
    return "; ".join(parts) or "no trace lines"


def run_app(installed: Installed) -> dict[str, float]:
    times: dict[str, float] = {}
    with Xvfb() as display:
        home = Path(tempfile.mkdtemp(prefix="portico-check-home-"))
        env = dict(os.environ, PORTICO_HOME=str(home), QT_QPA_PLATFORM="xcb")
        env.pop("WAYLAND_DISPLAY", None)
        dropped = drop_caches()
        trace: dict[str, float] = {}
        cold, proc, _ = launch(installed.launcher(), display, environ=env, trace=trace)
        times["cold" if dropped else "first"] = cold
        print(
            f"first launch after installing{' (page cache dropped)' if dropped else ''}: "
            f"window after {cold:.3f} s; SIGTERM -> exit {proc.returncode}"
        )
        print(f"  the app's own clock: {said(trace)}")
        if proc.returncode != 0:
            fail(f"the app did not quit cleanly on SIGTERM (exit {proc.returncode})")
        trace = {}
        warm, proc, window = launch(
            installed.launcher(), display, environ=env, keep=True, trace=trace
        )
        times["warm"] = warm
        print(f"second launch: window after {warm:.3f} s")
        try:
            # The screenshot shows the first run's welcome: the runtime has started and
            # the config is applied (the app says so on its trace).
            wait_for(lambda: "config applied" in trace, 90, "the app to apply its config")
            time.sleep(0.5)  # the welcome's import offers (found in a thread)
            print(f"  the app's own clock: {said(trace)}")
            screenshot(display, "installers-first-launch.png", window)
            step("a portico://add link, passed on by a second launch")
            second = subprocess.run(
                installed.launcher(LINK),
                env=dict(env, DISPLAY=display),
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            if second.returncode != 0:
                fail(f"the second launch failed: {second.stderr[-1000:]}")
            dialog = wait_for(
                lambda: find_window(display, "^Add server from a link"),
                20,
                "the confirmation dialog",
            )
            config = home / "config" / "mcp.toml"
            if config.exists():
                fail(f"{config} was written before the person confirmed")
            time.sleep(0.5)
            screenshot(display, "installers-deeplink.png", window)
            xdotool(display, "windowfocus", "--sync", dialog)  # no window manager here
            xdotool(display, "key", "alt+a")
            wait_for(
                lambda: config.is_file() and "hello-link" in config.read_text(),
                20,
                f"{config} to get the server",
            )
            print(f"confirmed with Alt+A: {config} now holds:")
            print("  " + config.read_text(encoding="utf-8").strip().replace("\n", "\n  "))
            step("quit with Ctrl+Q")
            xdotool(display, "windowfocus", "--sync", window)
            xdotool(display, "key", "ctrl+q")
            try:
                rc = proc.wait(60)
            except subprocess.TimeoutExpired:
                rc = quit_app(proc)
                fail(f"Ctrl+Q did not quit the app; SIGTERM did (exit {rc})")
            print(f"the app quit: exit {rc}")
            if rc != 0:
                fail(f"exit code {rc}")
        finally:
            if proc.poll() is None:
                quit_app(proc)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="installers/check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--deb", type=Path, help="check this package instead of building one")
    parser.add_argument(
        "--scratch", action="store_true", help="dpkg -x into a scratch root even when root"
    )
    parser.add_argument(
        "--bench", action="store_true", help="then run tests/benchmarks/test_bench_launch.py"
    )
    parser.add_argument("--keep", action="store_true", help="leave the package installed")
    args = parser.parse_args(argv)
    step("system tools")
    ensure_tools()
    step("Briefcase reads the app definition (every target)")
    subprocess.run([str(ROOT / "installers" / "build"), "validate"], check=True)
    step("build")
    if args.deb is None:
        out = subprocess.run(
            [str(ROOT / "installers" / "build"), "linux"],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        ).stdout
        print(out.strip())
        deb = Path(out.strip().splitlines()[-1])
    else:
        deb = args.deb.resolve()
    step("install")
    installed = install(deb, args.scratch)
    step("validate the desktop entry and the AppStream metadata")
    validate(installed)
    step("launch under Xvfb")
    times = run_app(installed)
    if args.bench and installed.system:
        step("benchmark")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-s",
                "-q",
                str(ROOT / "tests" / "benchmarks" / "test_bench_launch.py"),
            ],
            cwd=ROOT,
            check=True,
        )
    if installed.system and not args.keep:
        subprocess.run(
            ["apt-get", "remove", "-y", "-q", "portico"],
            check=True,
            stdout=subprocess.DEVNULL,
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
        )
        print("\nremoved the package again (--keep leaves it installed)")
    installed_kib = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Installed-Size"], capture_output=True, text=True, check=True
    ).stdout.strip()
    step("summary")
    print(
        f"package: {deb.name}: {deb.stat().st_size / 2**20:.1f} MiB "
        f"({int(installed_kib) / 1024:.0f} MiB installed)"
    )
    for name, seconds in times.items():
        print(f"launch to first window, {name}: {seconds:.3f} s")
    if "warm" in times and len(times) > 1:
        first = next(v for k, v in times.items() if k != "warm")
        print(f"cold / warm: {first / times['warm']:.2f} (load {os.getloadavg()[0]:.1f})")
    nice = prioritised()
    if nice is not None:
        print(f"(the app and Xvfb ran in sessions of their own at autogroup nice {nice})")
    print("installers/check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
