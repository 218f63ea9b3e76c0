"""SLOs: the outcome figures of `relay.outcomes` per workflow type and tenant, counted from the
audit trail over the installation's SLO window (the same queries the relay's Prometheus
gauges report), each linked to the workflows behind it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from interlock.console.guard import requires
from interlock.console.web import console_of, render
from interlock.relay.outcomes import Facts, Sample, completion_trend, sample_outcomes


@dataclass
class Row:
    """One (type, tenant)'s figures (absent: nothing in the window measured it) and, per
    terminal outcome, how many finished and their duration quantiles."""

    workflow_type: str
    tenant: str
    values: dict[str, float] = field(default_factory=dict)
    outcomes: dict[str, dict[str, float]] = field(default_factory=dict)


SUMMED = ("retries", "duplicate_effects", "manual_reviews", "reconciliations", "refusals")
PLAIN = ("started", "completed_unrescued", "completion_ratio", "manual_review_ratio")
QUANTILE = {"0.5": "p50", "0.95": "p95"}


def _add(r: Row, name: str, value: float, labels: dict[str, str]) -> None:
    q = QUANTILE.get(labels.get("quantile", ""), "")
    if name == "finished":
        r.outcomes.setdefault(labels["outcome"], {})["n"] = value
    elif name == "duration":
        r.outcomes.setdefault(labels["outcome"], {})[q] = value
    elif name == "first_progress":
        r.values[f"first_progress_{q}"] = value
    elif name == "wait" and labels.get("human") == "true":  # the longest wait on a person
        r.values[f"human_wait_{q}"] = max(value, r.values.get(f"human_wait_{q}", 0))
    elif name in SUMMED:
        r.values[name] = r.values.get(name, 0) + value
    elif name in PLAIN:
        r.values[name] = value


def rows_of(sample: Sample) -> list[Row]:
    """The figures of `sample` by (type, tenant), sorted; labelled counts summed."""
    found: dict[tuple[str, str], Row] = {}
    for name, points in sample.points.items():
        for value, labels in points:
            if "tenant" in labels:
                key = (labels["workflow_type"], labels["tenant"])
                _add(found.setdefault(key, Row(*key)), name, value, labels)
    return [found[k] for k in sorted(found)]


TREND_HOURS = 6


def trend_of(rows: list[Any], hours: int) -> dict[str, list[dict[str, Any]]]:
    """Per type, one point per hour of the last `hours` (oldest first): finished, completed
    without rescue and their ratio (None in an hour where nothing finished)."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    slots = [now - timedelta(hours=h) for h in range(hours - 1, -1, -1)]
    found = {(r["workflow_type"], r["hour"]): r for r in rows}
    trend: dict[str, list[dict[str, Any]]] = {}
    for workflow_type in sorted({r["workflow_type"] for r in rows}):
        points = []
        for hour in slots:
            r = found.get((workflow_type, hour))
            n, clean = (int(r["n"]), int(r["clean"])) if r else (0, 0)
            points.append({"hour": hour, "n": n, "clean": clean, "ratio": clean / n if n else None})
        trend[workflow_type] = points
    return trend


@requires()
async def slos_page(request: Request) -> Response:
    console = console_of(request)
    window = console.settings.slo_window
    facts = Facts.of(console.registry)
    async with console.reader.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        sample = await sample_outcomes(raw, facts, window)
        hourly = await completion_trend(raw, facts, TREND_HOURS)
    context = {
        "rows": rows_of(sample),
        "window_minutes": window / 60,
        "trend": trend_of(hourly, TREND_HOURS),
        "hours": TREND_HOURS,
    }
    return render(request, "slos.html", context)
