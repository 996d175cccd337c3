"""Messages as a tree: the shown path, siblings, the newest leaf under a message."""

from __future__ import annotations

from collections.abc import Sequence

from portico.chat.messages import Message


def children(messages: Sequence[Message], parent_id: str | None) -> list[Message]:
    return [m for m in messages if m.parent_id == parent_id]


def newest_leaf(messages: Sequence[Message], start: Message) -> Message:
    """Follow the newest child down to a leaf."""
    by_parent: dict[str | None, list[Message]] = {}
    for m in messages:
        by_parent.setdefault(m.parent_id, []).append(m)
    node = start
    while by_parent.get(node.id):
        node = by_parent[node.id][-1]
    return node


def path_to(messages: Sequence[Message], leaf_id: str | None) -> list[Message]:
    """Root-to-leaf path ending at ``leaf_id`` (default: the newest message's path)."""
    by_id = {m.id: m for m in messages}
    if not messages:
        return []
    leaf = by_id.get(leaf_id) if leaf_id else None
    if leaf is None:
        leaf = messages[-1]
    out: list[Message] = []
    node: Message | None = leaf
    seen: set[str] = set()
    while node is not None and node.id not in seen:
        seen.add(node.id)
        out.append(node)
        node = by_id.get(node.parent_id) if node.parent_id else None
    out.reverse()
    return out


def branches(messages: Sequence[Message]) -> list[Message]:
    """The leaf of every branch, numbered as ``portico chat --branch N`` counts them.

    Branch 1 is the first conversation: from the first message, always the first child
    down. Every later version of a message (an edit, a regenerated answer) starts one
    more branch, numbered in the order they were made; it goes on by first children too.
    So a number never changes: continuing a branch adds no branch, and a new version is
    the next number.
    """
    by_parent: dict[str | None, list[Message]] = {}
    for m in messages:
        by_parent.setdefault(m.parent_id, []).append(m)
    firsts = {kids[0].id for kids in by_parent.values()}
    starts = [m for m in messages if m.id not in firsts]
    roots = by_parent.get(None)
    if roots:
        starts.insert(0, roots[0])
    out: list[Message] = []
    for start in starts:
        node = start
        while by_parent.get(node.id):
            node = by_parent[node.id][0]
        out.append(node)
    return out
