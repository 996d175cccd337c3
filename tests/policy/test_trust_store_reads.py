"""The trust store parses its file only when it changed: a remembered read never hides a
decision made elsewhere or an edit of the file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from portico.policy.trust_store import TrustStore


def test_a_decision_saved_by_another_process_counts_at_once(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    ours, theirs = TrustStore(path), TrustStore(path)  # theirs: `portico mcp trust` elsewhere
    assert ours.get(tmp_path, "docs", "d1") is None
    theirs.set(tmp_path, "docs", "d1", "trust")
    assert ours.get(tmp_path, "docs", "d1") == "trust"
    theirs.set(tmp_path, "docs", "d1", "reject")
    assert ours.get(tmp_path, "docs", "d1") == "reject"
    assert ours.entry(tmp_path, "docs") == theirs.entry(tmp_path, "docs")
    path.unlink()
    assert ours.get(tmp_path, "docs", "d1") is None


def test_an_edit_in_place_that_restores_size_and_mtime_is_still_seen(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    store = TrustStore(path)
    store.set(tmp_path, "docs", "aaaa", "trust")
    assert store.get(tmp_path, "docs", "aaaa") == "trust"  # read and remembered
    stat = path.stat()
    data = json.loads(path.read_text(encoding="utf-8"))
    data["entries"][0]["digest"] = "bbbb"  # the same size
    time.sleep(0.05)  # past the file system's timestamp tick
    with path.open("r+", encoding="utf-8") as handle:  # the same inode
        handle.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the old mtime
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert store.get(tmp_path, "docs", "aaaa") is None
    assert store.get(tmp_path, "docs", "bbbb") == "trust"


def test_a_broken_file_is_reported_on_every_read_until_fixed(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    path.write_text("{not json", encoding="utf-8")
    store = TrustStore(path)
    assert store.get(tmp_path, "docs", "d") is None
    assert store.get(tmp_path, "docs", "d") is None
    assert len(store.problems) == 2 and "cannot read trust decisions" in store.problems[0]
    TrustStore(path).set(tmp_path, "docs", "d", "trust")
    assert store.get(tmp_path, "docs", "d") == "trust"
