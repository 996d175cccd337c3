"""The pins of a project launch's files: remembered digests never hide an edit."""

from __future__ import annotations

import os
import time
from pathlib import Path

from portico.config.model import Scope, Transport
from portico.policy.launch_files import named_paths, pinned_files
from tests.helpers.specs import spec_for


def test_an_edit_that_restores_size_and_mtime_is_still_seen(project: Path) -> None:
    script = project / "tools" / "serve.js"
    script.parent.mkdir()
    script.write_text("console.log('good');\n", encoding="utf-8")
    spec = spec_for(
        "notes",
        scope=Scope.PROJECT,
        project=project,
        transport=Transport.STDIO,
        command="node",
        args=("tools/serve.js", "--port", "0"),
        env=(("NODE_OPTIONS", "--require ./tools/serve.js"),),
    )
    assert named_paths(spec) == [script.resolve()]
    (before,) = pinned_files(spec)
    assert pinned_files(spec) == (before,)  # unchanged: the same pin (from memory)
    stat = script.stat()
    time.sleep(0.05)  # past the file system's timestamp tick
    script.write_text("console.log('evil');\n", encoding="utf-8")  # the same size
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the old mtime
    (after,) = pinned_files(spec)
    assert (after.size, script.stat().st_mtime_ns) == (before.size, stat.st_mtime_ns)
    assert after.digest != before.digest and after.path == "tools/serve.js"
