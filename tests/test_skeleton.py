"""The package skeleton: version, paths, the CLI entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from portico import __version__
from portico.cli.main import main
from portico.paths import paths, project_toml, project_yaml

pytestmark = pytest.mark.slow  # talks to real servers or processes


def test_portico_home_puts_every_dir_under_it(portico_home: Path) -> None:
    p = paths()
    for d in (p.config_dir, p.state_dir, p.cache_dir, p.log_dir):
        assert d.is_relative_to(portico_home.resolve())
    assert len({p.config_dir, p.state_dir, p.cache_dir, p.log_dir}) == 4
    assert p.global_toml.name == "mcp.toml"
    assert p.global_yaml.name == "config.yaml"


def test_without_portico_home_platformdirs_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORTICO_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/tmp/xdg-config")
    assert paths().config_dir == Path("/tmp/xdg-config/portico")


def test_project_files(tmp_path: Path) -> None:
    assert project_toml(tmp_path) == tmp_path / ".portico" / "mcp.toml"
    assert project_yaml(tmp_path) == tmp_path / ".portico" / "config.yaml"


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"portico {__version__}"


def test_console_script_is_installed() -> None:
    exe = Path(sys.executable).parent / "portico"
    result = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert __version__ in result.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland displays")
def test_no_display_says_so_instead_of_crashing() -> None:
    env = dict(os.environ)
    for key in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(key, None)
    exe = Path(sys.executable).parent / "portico"
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 1
    assert "no display to open the app on" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unexpected_error_is_one_line_and_a_log_file(portico_home: Path) -> None:
    env = {
        **os.environ,
        "PYTHON_KEYRING_BACKEND": "tests.helpers.keyrings.ExplodingKeyring",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    exe = Path(sys.executable).parent / "portico"
    result = subprocess.run(
        [str(exe), "secret", "get", "TOKEN"], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "portico: secret failed unexpectedly: RuntimeError: the secret service fell over" in (
        result.stderr
    )
    log = paths().log_dir / "cli-crash.log"
    assert f"The details are in {log}" in result.stderr
    assert "Traceback" in log.read_text() and "fell over" in log.read_text()


def test_the_version_servers_are_told_is_the_package_version() -> None:
    """Connections send ``portico.__version__`` as client_info (an app bundle may have no
    installed metadata), so it must match what pyproject.toml installs."""
    from importlib.metadata import version

    from portico.runtime.connection_session import _version

    assert _version() == __version__ == version("portico")
