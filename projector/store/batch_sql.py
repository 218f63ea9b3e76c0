"""One statement for several decisions: each decision's data-modifying CTEs (`sql.COMMIT`'s
or `sql.CREATE`'s), renamed apart, joined under one `WITH`, and a result row holding each
decision's `written` and `deferred` ids side by side.

Each decision still hangs every write off its own compare-and-set (`w_<i>`): a decision whose
version moved, or whose event was accepted before, writes nothing and reads `written_<i> = 0`,
whatever the others do. The whole statement is one transaction, so a value the
database refuses, or a duplicate racing another writer's (a unique violation), aborts all of
it, and the caller decides those again one by one (`batching`). The decisions of one statement
are of different workflows (a workflow's next decision waits for its previous one), so no
decision's CTEs need to see another's writes.

Statements are built once per sequence of kinds (`commit` or `create`) and cached.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from interlock.projector.store import sql

_CTES = (
    "w",
    "processed",
    "audited",
    "marked",
    "held",
    "paused",
    "published",
    "kept_back",
    "armed",
    "disarmed",
    "kept",
)
_NAME = re.compile(r"(?<![:\w])(" + "|".join(_CTES) + r")\b")
"""A CTE's name (not a placeholder of the same name, `:published`)."""
_PLACEHOLDER = re.compile(r"(?<!:):([a-z_][a-z0-9_]*)")
Kind = str
"""`commit` (an update of the workflow row) or `create` (its insert)."""


def _renamed(text: str, index: int) -> str:
    """`text` with its CTE names and placeholders suffixed `_<index>`, string literals kept."""
    parts = text.split("'")
    for n in range(0, len(parts), 2):  # outside quotes
        named = _NAME.sub(rf"\1_{index}", parts[n])
        parts[n] = _PLACEHOLDER.sub(rf":\1_{index}", named)
    return "'".join(parts)


@functools.lru_cache(maxsize=256)
def statement(kinds: tuple[Kind, ...]) -> sql.Statement:
    """The statement deciding `kinds` together, in that order."""
    ctes = []
    for index, kind in enumerate(kinds):
        part = _renamed(sql.HEADS[kind] + sql.RECORD, index)
        if index:
            part = "," + part.split("WITH", 1)[1]
        ctes.append(part)
    columns = ",\n       ".join(
        f"(SELECT count(*) FROM w_{i}) AS written_{i},\n"
        f"       ARRAY(SELECT id FROM published_{i} WHERE deferred ORDER BY id) AS deferred_{i}"
        for i in range(len(kinds))
    )
    return sql.compile_named("".join(ctes) + f"\nSELECT {columns}\n")


def arguments(statement_: sql.Statement, values: Sequence[Mapping[str, Any]]) -> list[object]:
    """The statement's arguments: decision `i`'s values for its names suffixed `_<i>`."""
    found: list[object] = []
    for name in statement_.names:
        base, _, index = name.rpartition("_")
        found.append(values[int(index)][base])
    return found


def outcomes(row: Sequence[Any], count: int) -> list[tuple[int, list[int]]]:
    """Each decision's (written, deferred outbox ids) from the statement's result row."""
    return [(int(row[2 * i]), list(row[2 * i + 1])) for i in range(count)]
