"""Operations: what is paused, stuck workflows, outbox lag, the newest dead letters (redriven
from here when the console is allowed to), workflows per state, and small charts of the
decisions and refusals the audit recorded in the last hour."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from interlock.console import deadletters, reads
from interlock.console.guard import requires
from interlock.console.web import console_of, flash, render

CHART_MINUTES = 60


def every_minute(points: list[dict[str, Any]], minutes: int) -> list[dict[str, Any]]:
    """One point per minute of the window, zero where nothing was decided, so the chart's
    time axis is even."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    found = {p["minute"]: p for p in points}
    slots = [now - timedelta(minutes=m) for m in range(minutes - 1, -1, -1)]
    return [found.get(t, {"minute": t, "accepted": 0, "refused": 0}) for t in slots]


def bars(points: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """Bar heights in percent of the largest total, for a small server-drawn chart."""
    peak = max((sum(p[k] for k in keys) for p in points), default=0) or 1
    return {
        "peak": peak,
        "points": [{**p, **{f"{k}_pct": 100 * p[k] / peak for k in keys}} for p in points],
    }


@requires()
async def operations_page(request: Request) -> Response:
    console = console_of(request)
    engine = console.reader
    registry = console.registry
    stuck, _ = await reads.list_workflows(
        engine,
        reads.Filters(stuck=True),
        registry=registry,
        stuck_after=console.settings.stuck_after,
        parameters=console.settings.parameters,
        limit=20,
    )
    activity = await reads.activity(engine, CHART_MINUTES)
    refusals = await reads.refusals(engine, CHART_MINUTES)
    context = {
        "stuck": stuck,
        "stuck_after": console.settings.stuck_after,
        "lag": await reads.outbox_lag(engine),
        "paused": await reads.paused(engine),
        "dead": await deadletters.newest(console.nats_url),
        "counts": await reads.state_counts(engine, reads.Filters(), registry=registry),
        "activity": bars(every_minute(activity, CHART_MINUTES), ("accepted", "refused")),
        "refusals": bars(refusals, ("n",)),
        "minutes": CHART_MINUTES,
        "redrive": console.settings.console_redrive,
    }
    return render(request, "operations.html", context)


@requires("operator")
async def redrive(request: Request) -> Response:
    """Send one dead letter back to where it came from, as `interlock dlq redrive ID` does."""
    console = console_of(request)
    letter_id = int(request.path_params["letter_id"])
    if not console.settings.console_redrive:
        flash(request, "refused", "Redriving from the console is off (INTERLOCK_CONSOLE_REDRIVE)")
        return RedirectResponse("/operations", status_code=303)
    operator = request.state.operator.name
    failed = await deadletters.redrive(console.nats_url, letter_id, operator)
    if failed is None:
        flash(request, "accepted", f"Dead letter {letter_id} redriven")
    else:
        flash(request, "refused", f"Dead letter {letter_id} not redriven: {failed}")
    return RedirectResponse("/operations", status_code=303)
