"""Query plans of what a piece of code asks PostgreSQL: the statements are captured as they
run, then explained with the same parameters."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

Statement = tuple[str, Any]


@asynccontextmanager
async def captured(engine: AsyncEngine) -> AsyncIterator[list[Statement]]:
    """Every statement `engine` runs inside the block, with its parameters."""
    found: list[Statement] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        found.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield found
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def explain(engine: AsyncEngine, statement: Statement) -> dict[str, Any]:
    """The plan (`EXPLAIN (FORMAT JSON)`'s top node) of a captured statement."""
    sql, parameters = statement
    async with engine.connect() as conn:
        result = await conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {sql}", parameters)
        document = result.scalar_one()
    plan = json.loads(document) if isinstance(document, str) else document
    return dict(plan[0]["Plan"])


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def sequential_scans(plan: dict[str, Any], tables: set[str]) -> list[str]:
    """The tables among `tables` that the plan reads in full."""
    return [
        n["Relation Name"]
        for n in nodes(plan)
        if n["Node Type"] == "Seq Scan" and n.get("Relation Name") in tables
    ]
