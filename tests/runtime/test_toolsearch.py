from __future__ import annotations

import json

from portico.runtime.toolsearch import ActiveSet, SearchDoc, ToolIndex, should_defer, tokenize


def test_tokenize_splits_names() -> None:
    assert "issue" in tokenize("github__createIssue")
    assert "create" in tokenize("create_issue")


def test_bm25_ranks_the_best_match_first() -> None:
    index = ToolIndex(
        [
            SearchDoc(
                "github__create_issue", "Create a new issue in a repository", ("title", "body")
            ),
            SearchDoc("github__list_issues", "List issues of a repository", ("state",)),
            SearchDoc("fs__read_file", "Read a file from disk", ("path",)),
            SearchDoc("weather__forecast", "Weather forecast for a city", ("city",)),
        ]
    )
    hits = [n for n, _ in index.search("create issue", limit=2)]
    assert hits[0] == "github__create_issue"
    assert [n for n, _ in index.search("city", limit=1)] == ["weather__forecast"]
    assert index.search("nothing-matches-this", limit=3) == []


def test_active_set_round_trips() -> None:
    s = ActiveSet(["a", "b"])
    s.add(["b", "c"])
    data = json.loads(json.dumps(s.to_json()))
    assert list(ActiveSet.from_json(data)) == ["a", "b", "c"]


def test_should_defer() -> None:
    assert should_defer(1, 0)
    assert not should_defer(10, 10)
    assert should_defer(11, 10)
