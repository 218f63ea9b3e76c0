"""Human tasks: the inbox of approvals and manual reviews, and the forms that answer them
(on this page and on a workflow's own) by sending the CLI's signals as the operator."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from interlock.console import actions, reads
from interlock.console.guard import requires, safe_next
from interlock.console.presenting import redact
from interlock.console.web import console_of, find_workflow, flash, render
from interlock.contracts.registry import Registry
from interlock.projector.engine.guards import lookup


def task(row: dict[str, Any], registry: Registry, redacted: frozenset[str]) -> dict[str, Any]:
    """What a person needs to answer: the kind of task, what the workflow's announcement of it
    carries (proposed action, evidence), its expiry, and why a review was opened."""
    definition = registry.get(row["workflow_type"], row["definition_version"])
    announcement = definition.announcement(row["state"])
    execution = row["execution"] or {}
    fields: dict[str, Any] = {}
    expires_at = None
    if announcement is not None:
        fields = {k: lookup(row["data"], path) for k, path in announcement.fields.items()}
        timer = (execution.get("timers") or {}).get(announcement.expiry_timer or "")
        expires_at = timer["fire_at"] if timer else None
    review = execution.get("review") or {}
    kind = "manual review" if row["state"] == definition.review_state else "approval"
    view = {**row, "workflow_id": row["id"]}
    return {
        "view": view,
        "kind": kind,
        "fields": redact(fields, redacted),
        "expires_at": expires_at,
        "review": review,
        "actions": actions.offered(registry, view),
    }


@requires()
async def inbox(request: Request) -> Response:
    console = console_of(request)
    operator = request.state.operator
    registry = console.registry
    rows = await reads.human_tasks(console.reader, registry=registry)
    tasks = [task(r, registry, console.settings.console_redact) for r in rows]
    for t in tasks:
        allowed = [a for a in t["actions"] if operator.may(a.allowed)]
        t["actions"] = actions.forms(registry, t["view"], allowed, console.settings.console_redact)
        t["limit"] = actions.limit_of(console.settings, registry, t["view"], operator)
    return render(request, "tasks.html", {"tasks": tasks})


@requires("approver", "operator")
async def signal(request: Request) -> Response:
    console = console_of(request)
    operator = request.state.operator
    form = await request.form()
    back = safe_next(form.get("next"))
    view = await find_workflow(request)
    action = actions.BY_NAME.get(str(form.get("action", "")))
    if view is None or action is None:
        return PlainTextResponse("no such workflow or action", status_code=404)
    if not operator.may(action.allowed):
        return PlainTextResponse("your role may not do this", status_code=403)
    if action not in actions.offered(console.registry, view):
        flash(request, "refused", f"{action.label} is not possible in {view['state']}")
        return RedirectResponse(back, status_code=303)
    urls = (console.nats_url, console.database_url)
    decision = await actions.perform(
        console.settings, urls, view, operator, action, registry=console.registry, form=form
    )
    flash(request, *describe(action, decision))
    return RedirectResponse(back, status_code=303)


def describe(action: actions.Action, decision: dict[str, Any]) -> tuple[str, str]:
    """The flash message for the projector's decision on an action's signal."""
    if decision.get("accepted"):
        moved = f"{decision['from_state']} → {decision['to_state']}"
        return "accepted", f"{action.event} accepted: {moved}"
    failed = [g for g in decision.get("guard_results") or [] if str(g).startswith("!")]
    because = "; ".join(filter(None, [decision.get("detail"), ", ".join(failed)]))
    return "refused", f"{action.event} refused: {decision.get('reason')}" + (
        f" ({because})" if because else ""
    )
