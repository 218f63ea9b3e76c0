"""NATS subject matching as the broker applies a permission or a filter, for tests that check
what a pattern lets through without a server."""

from __future__ import annotations

from collections.abc import Iterable


def matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: `*` is one token, a final `>` one or more."""
    want, have = pattern.split("."), subject.split(".")
    for i, token in enumerate(want):
        if token == ">":
            return len(have) > i
        if i >= len(have) or token not in ("*", have[i]):
            return False
    return len(want) == len(have)


def allowed(patterns: Iterable[str], subject: str) -> bool:
    """Whether any of `patterns` matches `subject`."""
    return any(matches(p, subject) for p in patterns)
