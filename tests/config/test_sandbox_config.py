"""The ``sandbox`` key: both dialects, the defaults, errors that name the entry, and a
project that may tighten its sandbox but never loosen it (each loosening in words)."""

from __future__ import annotations

from pathlib import Path

from portico import paths
from portico.config import load
from portico.config.model import SandboxSpec


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_both_dialects_read_the_same_sandbox(project: Path) -> None:
    write(
        paths.paths().global_toml,
        '[mcp.t]\ncommand = ["t"]\n\n[mcp.t.sandbox]\nenabled = true\nread = ["~/notes"]\n'
        'write = ["/tmp/out"]\nnetwork = { allow = ["api.example.com", "h.example.org:8443"] }\n',
    )
    write(
        paths.paths().global_yaml,
        "mcp_servers:\n  y:\n    command: y\n    sandbox:\n      enabled: true\n"
        "      read: [~/notes]\n      write: [/tmp/out]\n"
        "      network:\n        allow: [api.example.com, h.example.org:8443]\n",
    )
    config = load(project)
    assert config.diagnostics == ()
    expected = SandboxSpec(
        enabled=True,
        read=("~/notes",),
        write=("/tmp/out",),
        network_allow=("api.example.com", "h.example.org:8443"),
    )
    t, y = config.server("t"), config.server("y")
    assert t is not None and y is not None
    assert t.sandbox == y.sandbox == expected
    assert t.sandboxed and y.sandboxed


def test_project_servers_are_sandboxed_by_default_and_global_ones_opt_in(project: Path) -> None:
    write(paths.paths().global_toml, '[mcp.g]\ncommand = ["g"]\n')
    write(
        paths.project_toml(project),
        '[mcp.p]\ncommand = ["p"]\n\n[mcp.h]\nurl = "https://h.example.com/mcp"\n',
    )
    config = load(project)
    g, p, h = config.server("g"), config.server("p"), config.server("h")
    assert g is not None and p is not None and h is not None
    assert p.sandboxed and not g.sandboxed and not h.sandboxed
    assert p.loosened == ()
    # the top-level setting makes it the default for every stdio server
    write(paths.paths().global_toml, 'sandbox.enabled = true\n\n[mcp.g]\ncommand = ["g"]\n')
    g = load(project).server("g")
    assert g is not None and g.sandboxed
    write(paths.paths().global_yaml, "sandbox:\n  enabled: true\n")
    write(paths.paths().global_toml, '[mcp.g]\ncommand = ["g"]\n')
    g = load(project).server("g")
    assert g is not None and g.sandboxed


def test_a_bad_host_or_path_names_file_line_server_and_key(project: Path) -> None:
    f = write(
        paths.paths().global_toml,
        '[mcp.t]\ncommand = ["t"]\n[mcp.t.sandbox]\nread = ["~bob/x"]\n'
        '[mcp.t.sandbox.network]\nallow = ["https://api.example.com/x"]\n',
    )
    config = load(project)
    assert config.server("t") is None
    messages = [str(d) for d in config.errors]
    assert any(
        m.startswith(f"{f}:4: t.sandbox.read.0: ") and "only ~ and ~/path" in m for m in messages
    ), messages
    assert any(
        m.startswith(f"{f}:6: t.sandbox.network.allow.0: ") and "not host or host:port" in m
        for m in messages
    ), messages
    write(paths.paths().global_toml, '[mcp.t]\ncommand = ["t"]\nsandbox = { enabled = "yes" }\n')
    errors = [str(d) for d in load(project).errors]
    assert any("t.sandbox.enabled: must be true or false" in m for m in errors), errors


def test_a_project_disabling_its_sandbox_is_a_loosening(project: Path) -> None:
    write(paths.project_toml(project), '[mcp.p]\ncommand = ["p"]\nsandbox = { enabled = false }\n')
    p = load(project).server("p")
    assert p is not None and not p.sandboxed
    assert len(p.loosened) == 1 and p.loosened[0].startswith("runs outside the sandbox")
    # ... unless your own server of that name runs unsandboxed on purpose
    write(paths.paths().global_toml, '[mcp.p]\ncommand = ["p"]\nsandbox = { enabled = false }\n')
    p = load(project).server("p")
    assert p is not None and p.loosened == ()


def test_a_project_widening_read_write_or_network_is_a_loosening(project: Path) -> None:
    write(
        paths.project_yaml(project),
        "mcp_servers:\n  p:\n    command: p\n    sandbox:\n"
        "      read: [./docs, /srv/data, ~/.ssh]\n      write: [./out]\n"
        "      network: {allow: [api.example.com]}\n",
    )
    p = load(project).server("p")
    assert p is not None and p.sandboxed
    home = str(Path.home())
    assert p.loosened == (
        f"may read outside its project: /srv/data, {home}/.ssh (sandbox.read)",
        f"may write to {project}/out (sandbox.write)",
        "may reach on the network: api.example.com (sandbox.network.allow)",
    )
    # what your global server of the same name already allows widens nothing
    write(
        paths.paths().global_yaml,
        "mcp_servers:\n  p:\n    command: p\n    sandbox:\n      enabled: true\n"
        f"      read: [/srv, ~/.ssh]\n      write: [{project}/out]\n"
        "      network: {allow: [api.example.com]}\n",
    )
    p = load(project).server("p")
    assert p is not None and p.loosened == ()


def test_a_project_cannot_turn_the_global_default_off(project: Path) -> None:
    write(paths.paths().global_toml, "sandbox.enabled = true\n")
    pfile = write(
        paths.project_toml(project), 'sandbox.enabled = false\n[mcp.p]\ncommand = ["p"]\n'
    )
    config = load(project)
    assert config.settings.sandbox_all is True
    assert any(
        d.path == pfile
        and "ignored: a project file may tighten" in d.message
        and d.key == "sandbox.enabled"
        for d in config.warnings
    ), config.diagnostics
