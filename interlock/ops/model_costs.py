"""What model calls cost, added up from the committed records (`interlock costs`).

Every workflow keeps its model calls in its execution (`contracts.model_calls`), live or
archived by retention; this read model adds their tokens and costs up in the database, grouped
by workflow type, tenant, task, model or workflow, optionally only the calls committed since a
time. A workflow's calls beyond the kept bound (`MAX_KEPT`) are in its totals
(`show`'s `model_spend`) but not here.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

By = Literal["type", "tenant", "task", "model", "workflow"]
BY: tuple[By, ...] = ("type", "tenant", "task", "model", "workflow")
_KEYS: dict[str, str] = {
    "type": "workflow_type",
    "tenant": "tenant_id",
    "task": "c->>'task'",
    "model": "c->>'model'",
    "workflow": "workflow_id",
}
_GROUPS: dict[str, str] = {**_KEYS, "workflow": "tenant_id, workflow_id"}

_CALLS = """
WITH calls AS (
    SELECT w.workflow_type, w.tenant_id, w.id AS workflow_id, c
    FROM workflows w
    CROSS JOIN LATERAL jsonb_array_elements(
        COALESCE(w.execution->'model_calls', '[]'::jsonb)) AS c
    UNION ALL
    SELECT a.workflow_type, a.tenant_id, a.id AS workflow_id, c
    FROM workflow_archive a
    CROSS JOIN LATERAL jsonb_array_elements(
        COALESCE(a.execution->'model_calls', '[]'::jsonb)) AS c
)
SELECT {select} count(*) AS calls,
    COALESCE(sum((c->'tokens'->>'input')::bigint), 0) AS tokens_in,
    COALESCE(sum((c->'tokens'->>'output')::bigint), 0) AS tokens_out,
    COALESCE(sum((c->>'cost')::numeric), 0) AS cost
FROM calls
WHERE (CAST(:since AS timestamptz) IS NULL OR (c->>'at')::timestamptz >= :since)
  AND (CAST(:workflow_type AS text) IS NULL OR workflow_type = :workflow_type)
  AND (CAST(:tenant AS text) IS NULL OR tenant_id = :tenant)
{group}
"""


async def costs(
    engine: AsyncEngine,
    *,
    by: By = "type",
    since: datetime | None = None,
    workflow_type: str | None = None,
    tenant: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """`{"by", "since", "rows": [{"key", "calls", "tokens_in", "tokens_out", "cost"}], "total"}`:
    the `limit` most expensive groups, and the total of every call selected."""
    params = {"since": since, "workflow_type": workflow_type, "tenant": tenant, "limit": limit}
    grouped = _CALLS.format(
        select=f"({_KEYS[by]}) AS key, min(tenant_id) AS tenant_id,",
        group=f"GROUP BY {_GROUPS[by]} ORDER BY cost DESC, key LIMIT :limit",
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(text(grouped), params)).mappings().all()
        total = (await conn.execute(text(_CALLS.format(select="", group="")), params)).mappings()
        summed = total.one()
    return {
        "by": by,
        "since": since.isoformat() if since else None,
        "rows": [_row(r, by) for r in rows],
        "total": _sums(summed),
    }


def _row(row: Any, by: By) -> dict[str, Any]:
    extra = {"tenant_id": row["tenant_id"]} if by == "workflow" else {}
    return {"key": row["key"] or "unknown", **extra, **_sums(row)}


def _sums(row: Any) -> dict[str, Any]:
    return {
        "calls": int(row["calls"]),
        "tokens_in": int(row["tokens_in"]),
        "tokens_out": int(row["tokens_out"]),
        "cost": float(Decimal(row["cost"])),
    }
