"""The workflows list (filters, counts per state, newest first, paginated, live refresh), one
workflow (header, diagram with the path taken, audit timeline, data, model calls, trace), and
their JSON for the pages' refresh."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from interlock.config.telemetry import traces_dir
from interlock.console import actions, reads
from interlock.console.drawing import layout, taken_edges
from interlock.console.errors import BadFilter
from interlock.console.guard import requires
from interlock.console.presenting import model_calls, redact, waterfall
from interlock.console.web import console_of, find_workflow, render
from interlock.contracts.diagram import diagram
from interlock.contracts.effectcheck import effects_view
from interlock.ops.failures import last_failure
from interlock.ops.traceview import assemble

_MAX_FILTER = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _value(request: Request, name: str) -> str:
    """A filter's value as given; one with a control character (NUL among them, which the
    database refuses in text) or over 200 characters is `BadFilter`."""
    value = request.query_params.get(name, "")
    if len(value) > _MAX_FILTER or _CONTROL.search(value):
        raise BadFilter(f"{name}: at most {_MAX_FILTER} printable characters")
    return value


def _cursor(value: str) -> str:
    """`before` is empty or the `<updated_at iso>~<workflow id>` a page's `next` gave."""
    if not value:
        return value
    at, tilde, workflow_id = value.partition("~")
    try:
        parsed = datetime.fromisoformat(at)
        parsed.astimezone(UTC)  # what the database is given: a time Python can hold in UTC
    except (ValueError, OverflowError):
        parsed = None
    if not (tilde and workflow_id and parsed is not None and parsed.tzinfo is not None):
        raise BadFilter("before: not a cursor a page's `next` gave")
    return value


def _filters(request: Request) -> reads.Filters:
    return reads.Filters(
        workflow_type=_value(request, "type"),
        state=_value(request, "state"),
        tenant=_value(request, "tenant"),
        search=_value(request, "q").strip(),
        human=request.query_params.get("human") == "1",
        stuck=request.query_params.get("stuck") == "1",
        before=_cursor(_value(request, "before")),
    )


async def _listing(request: Request) -> dict[str, Any]:
    console = console_of(request)
    f = _filters(request)
    stuck_after = console.settings.stuck_after
    registry = console.registry
    rows, cursor = await reads.list_workflows(
        console.reader,
        f,
        registry=registry,
        stuck_after=stuck_after,
        parameters=console.settings.parameters,
    )
    counts = await reads.state_counts(console.reader, f, registry=registry)
    return {"filters": f, "rows": rows, "cursor": cursor, "counts": counts}


@requires()
async def workflows_page(request: Request) -> Response:
    try:
        listing = await _listing(request)
    except BadFilter as exc:
        return PlainTextResponse(str(exc), status_code=400)
    registry = console_of(request).registry
    states = sorted({s for d in registry for s in d.states})
    partial = request.headers.get("x-console-refresh") == "1"
    template = "_workflow_rows.html" if partial else "workflows.html"
    context = {**listing, "types": registry.workflow_types(), "states": states}
    return render(request, template, context)


@requires()
async def workflows_api(request: Request) -> Response:
    try:
        listing = await _listing(request)
    except BadFilter as exc:
        return JSONResponse({"error": "bad_filter", "detail": str(exc)}, status_code=400)
    rows = [
        {**r, "created_at": r["created_at"].isoformat(), "updated_at": r["updated_at"].isoformat()}
        for r in listing["rows"]
    ]
    return JSONResponse({"workflows": rows, "next": listing["cursor"], "counts": listing["counts"]})


@requires()
async def workflow_page(request: Request) -> Response:
    view = await find_workflow(request)
    if view is None:
        return PlainTextResponse("no such workflow", status_code=404)
    console = console_of(request)
    settings = console.settings
    definition = console.registry.get(view["workflow_type"], view["definition_version"])
    drawing = layout(diagram(definition), taken_edges(view["audit"]), view["state"])
    tree = assemble(view, traces_dir(settings)) if settings.jaeger_url is None else None
    operator = request.state.operator
    entered = next(
        (
            a["recorded_at"]
            for a in reversed(view["audit"])
            if a["accepted"] and a["to_state"] == view["state"]
        ),
        view["created_at"],
    )
    context = {
        "view": view,
        "definition": definition,
        "drawing": drawing,
        "entered": entered,
        "last_failure": last_failure(view),
        "effects": [
            e for e in effects_view(definition, view["execution"]) if e["status"] != "none"
        ],
        "data": redact(view["data"], settings.console_redact),
        "calls": model_calls(view["execution"], view["data"], settings.console_redact),
        "spans": waterfall(tree["spans"]) if tree else [],
        "jaeger": settings.jaeger_url,
        "trace_ids": tree["trace_ids"]
        if tree
        else list(dict.fromkeys(a["trace_id"] for a in view["audit"] if a["trace_id"])),
        "actions": actions.forms(
            console.registry,
            view,
            actions.offered(console.registry, view, operator),
            settings.console_redact,
        ),
        "limit": actions.limit_of(settings, console.registry, view, operator),
    }
    return render(request, "workflow.html", context)


@requires()
async def workflow_api(request: Request) -> Response:
    view = await find_workflow(request)
    if view is None:
        return JSONResponse({"error": "unknown_workflow"}, status_code=404)
    fields = ("workflow_id", "tenant_id", "workflow_type", "state", "version", "updated_at")
    return JSONResponse({k: view[k] for k in fields})
