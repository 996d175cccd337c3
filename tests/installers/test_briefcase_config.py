"""briefcase.toml stays in step with pyproject.toml, run.sh, the README and the pre-Qt
check; the staged pyproject carries the Briefcase tables, the real one stays plain."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from portico import __version__
from portico.cli import qt_libs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "installers"))
import build  # noqa: E402

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
BRIEFCASE = tomllib.loads((ROOT / "briefcase.toml").read_text(encoding="utf-8"))["tool"][
    "briefcase"
]
APP = BRIEFCASE["app"]["portico"]


def test_requirements_and_version_come_from_pyproject() -> None:
    assert APP["requires"] == PYPROJECT["project"]["dependencies"]
    assert "version" not in BRIEFCASE
    assert PYPROJECT["project"]["version"] == __version__
    assert "briefcase" not in PYPROJECT.get("tool", {})  # the real file stays plain PEP 621


def test_the_debian_runtime_packages_are_one_list_everywhere() -> None:
    debian = APP["linux"]["system"]["debian"]["system_runtime_requires"]
    assert debian == list(qt_libs.DEBIAN_RUNTIME)
    run_sh = (ROOT / "scripts" / "run.sh").read_text(encoding="utf-8")
    listed = re.search(r'QT_RUNTIME_DEBIAN="([^"]+)"', run_sh)
    assert listed is not None and listed.group(1).split() == debian
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`" + " ".join(debian) + "`" in readme
    # every library the check can name maps to a package (on each distribution)
    for soname in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"):
        assert qt_libs.PACKAGES[soname][0] in debian


def test_the_package_recommends_the_symbol_font_run_sh_installs(tmp_path: Path) -> None:
    run_sh = (ROOT / "scripts" / "run.sh").read_text(encoding="utf-8")
    fonts = re.search(r'FONTS_DEBIAN="([^"]+)"', run_sh)
    assert fonts is not None and tuple(fonts.group(1).split()) == build.RECOMMENDS
    assert "$QT_RUNTIME_DEBIAN $FONTS_DEBIAN" in run_sh  # both are checked and installed
    build._control(tmp_path, "0.1.0", "amd64", "3.11", 1000)
    control = (tmp_path / "DEBIAN" / "control").read_text(encoding="utf-8")
    assert "\nRecommends: fonts-symbola\n" in control
    assert "fonts-symbola" not in control.split("\nDepends: ")[1].split("\n")[0]


def test_the_app_definition_is_complete() -> None:
    assert BRIEFCASE["bundle"] == "org.portico" and APP["formal_name"] == "Portico"
    assert 0 < len(APP["description"]) <= 80  # Briefcase truncates longer ones
    icon = ROOT / APP["icon"]
    for suffix in ("-16.png", "-32.png", "-64.png", "-128.png", "-256.png", "-512.png"):
        assert Path(f"{icon}{suffix}").is_file()
    assert icon.with_suffix(".icns").is_file() and icon.with_suffix(".ico").is_file()
    assert BRIEFCASE["license"] == PYPROJECT["project"]["license"]
    assert all((ROOT / name).is_file() for name in BRIEFCASE["license-files"])
    flatpak = APP["linux"]["flatpak"]
    assert (
        flatpak["flatpak_runtime"] == "org.kde.Platform" and flatpak["flatpak_sdk"] == "org.kde.Sdk"
    )
    for platform in ("macOS", "windows", "linux"):
        assert platform in APP
    assert APP["macOS"]["info"]["CFBundleURLTypes"][0]["CFBundleURLSchemes"] == ["portico"]


def test_the_stage_merges_briefcase_into_a_copy(tmp_path: Path) -> None:
    merged = build.merged_pyproject(ROOT / "pyproject.toml", ROOT / "briefcase.toml")
    assert merged["tool"]["briefcase"]["version"] == __version__
    assert merged["tool"]["briefcase"]["app"]["portico"]["requires"] == APP["requires"]
    assert merged["project"]["dependencies"] == PYPROJECT["project"]["dependencies"]
    assert merged["tool"]["ruff"] == PYPROJECT["tool"]["ruff"]  # the rest is kept


def test_out_of_step_requirements_stop_the_build(tmp_path: Path) -> None:
    briefcase = tmp_path / "briefcase.toml"
    text = (ROOT / "briefcase.toml").read_text(encoding="utf-8")
    briefcase.write_text(text.replace('    "socksio>=1.0",\n', ""), encoding="utf-8")
    with pytest.raises(SystemExit):
        build.merged_pyproject(ROOT / "pyproject.toml", briefcase)


def test_the_desktop_entry_and_metainfo_validate() -> None:
    desktop = ROOT / "resources" / "org.portico.portico.desktop"
    entry = dict(line.split("=", 1) for line in desktop.read_text().splitlines() if "=" in line)
    assert entry["MimeType"] == "x-scheme-handler/portico;"
    assert entry["Exec"] == "portico-desktop %u"
    assert entry["StartupWMClass"] == "Portico"  # Qt's WM_CLASS class: the application name
    for key in ("Name", "GenericName", "Comment", "Icon", "Categories", "Keywords"):
        assert entry[key]
    metainfo = ROOT / "resources" / "org.portico.portico.metainfo.xml"
    text = metainfo.read_text()
    assert '<launchable type="desktop-id">org.portico.portico.desktop</launchable>' in text
    assert text.count("<screenshot") >= 2
    for tool, args in (
        ("desktop-file-validate", [str(desktop)]),
        ("appstreamcli", ["validate", "--no-net", str(metainfo)]),
    ):
        try:
            proc = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
        except FileNotFoundError:
            continue  # installers/check installs and runs both
        assert proc.returncode == 0, proc.stdout + proc.stderr
