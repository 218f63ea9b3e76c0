"""The selection options of the bulk operator commands, and the glue that previews and applies
a signal (`retry`, `cancel`) or a migration (`migrate-workflow`) to each selected workflow
(see `interlock.cli.bulk`)."""

from __future__ import annotations

from collections.abc import Mapping
from inspect import Parameter
from typing import Annotated, Any

import typer

from interlock.app.options import with_database, with_stack
from interlock.cli.bulk import Mode, Preview, check_mode, report, run, usage
from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Actor, utcnow
from interlock.contracts.errors import UnknownDefinition
from interlock.ops import bulk
from interlock.ops.commands import send_and_wait
from interlock.ops.errors import InvalidSelection, InvalidSignal, NotAccepted
from interlock.ops.migration import migrate
from interlock.ops.selection import Selection, selection
from interlock.ops.signal_payloads import default_role, given_values, payload_for
from interlock.ops.signals import signal_envelope
from interlock.projector.engine import Context, Workflow

TypeSel = Annotated[
    str | None, typer.Option("--type", help="Select the workflows of this type (not one id).")
]
StateSel = Annotated[
    list[str] | None,
    typer.Option("--state", help="With --type: in this state (repeatable, or S1,S2)."),
]
SinceSel = Annotated[
    str | None,
    typer.Option("--since", help="With --type: changed within DURATION (90s, 15m, 2h, 1d)."),
]
ReasonSel = Annotated[
    str | None,
    typer.Option("--reason", help="With --type: whose review reason (or last failure) is R."),
]
LimitSel = Annotated[
    int | None, typer.Option("--limit", help="With --type: at most N workflows (1000).")
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print what would happen to each; send nothing.")
]
YesOpt = Annotated[bool, typer.Option("--yes", help="Apply the selection without asking.")]
PaceOpt = Annotated[float, typer.Option("--pace", help="Most changes sent per second.")]


SELECTION = ("workflow_type", "states", "since", "limit", "dry_run", "yes", "pace")


def option(name: str, annotation: Any, default: Any) -> Parameter:
    return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def selection_options(*, with_reason: bool) -> list[Parameter]:
    """The selection options a selectable command adds to its signature."""
    found = [
        option("workflow_type", TypeSel, None),
        option("states", StateSel, None),
        option("since", SinceSel, None),
        option("limit", LimitSel, None),
        option("dry_run", DryRunOpt, False),
        option("yes", YesOpt, False),
        option("pace", PaceOpt, 5.0),
    ]
    return found + ([option("reason", ReasonSel, None)] if with_reason else [])


def signal_selection(
    name: str,
    event: str,
    picked: dict[str, Any],
    *,
    reason: str | None,
    payload_json: str | None,
    fields: list[str] | None,
    signing: dict[str, Any],
) -> None:
    """Command `name` (sending `event`) applied to the selection `picked` (its options, and
    `--reason`, which selects): preview, confirm, apply."""
    selected = chosen(
        picked["workflow_type"],
        states=picked.get("states"),
        tenant=signing["tenant"],
        since=picked.get("since"),
        reason=reason or None,
        limit=picked.get("limit"),
    )
    try:
        given = given_values(payload_json, fields or ())
    except InvalidSignal as exc:
        raise usage(f"invalid signal: {exc}") from None
    mode = Mode(picked["dry_run"], picked["yes"], signing["json"], picked["pace"])
    bulk_signal(
        event,
        selected,
        mode,
        operator=signing["actor"],
        role=signing["role"],
        given=given,
        defaults={"reason": f"bulk {name} by {signing['actor']}"},
    )


def chosen(
    workflow_type: str,
    *,
    states: list[str] | None,
    tenant: str | None,
    since: str | None,
    reason: str | None,
    limit: int | None,
) -> Selection:
    """The checked selection, or exit 2 with one line."""
    versions = [d for d in installed().registry if d.workflow_type == workflow_type]
    if not versions:
        raise usage(f"--type: unknown workflow type {workflow_type}")
    try:
        return selection(
            workflow_type,
            states=states or (),
            tenant_id=tenant,
            since=since,
            reason=reason,
            limit=limit,
            known_states={s for d in versions for s in d.states},
        )
    except InvalidSelection as exc:
        raise usage(str(exc)) from None


def bulk_signal(
    event: str,
    chosen: Selection,
    mode: Mode,
    *,
    operator: str,
    role: str | None,
    given: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> None:
    """Preview, then (confirmed) send `event` to each selected workflow."""
    check_mode(mode)

    async def work(s: Settings, nats_url: str, database_url: str) -> tuple[list[Preview], bool]:
        parameters = s.parameters.get(chosen.workflow_type, {})

        def signer(definition: WorkflowDefinition) -> Actor:
            merged = {**definition.parameters, **parameters}
            return Actor(id=operator, role=role or default_role(merged, event))

        def payload(view: dict[str, Any]) -> dict[str, Any]:
            return payload_for(_definition(view), view, event, given=given, defaults=defaults)

        def preview(wf: Workflow) -> Preview:
            view = bulk.view_of(wf)
            try:
                definition = _definition(view)
                envelope = signal_envelope(view, event, payload(view), signer(definition))
            except NotAccepted as exc:
                return bulk.refused(wf, exc.reason, str(exc))
            except InvalidSignal as exc:
                return bulk.refused(wf, "invalid_signal", str(exc))
            guards = installed().registry.guards(wf.workflow_type)
            ctx = Context(now=utcnow(), parameters=parameters, guards=guards)
            return bulk.preview_signal(definition, wf, envelope, ctx)

        async def send(p: Preview) -> dict[str, Any]:
            return await send_and_wait(
                access.as_client(s, nats_url, access.OPERATOR),
                database_url,
                p["workflow_id"],
                event,
                payload=payload,
                actor=lambda view: signer(_definition(view)),
                tenant_id=p["tenant_id"],
                admin_url=nats_url,
            )

        return await run(
            database_url,
            chosen,
            mode,
            preview=preview,
            action=event,
            operator=operator,
            send=send,
        )

    previews, truncated = with_stack(work)
    report(chosen, previews, truncated, mode.json_output)


def bulk_migration(
    chosen: Selection, mode: Mode, *, to_version: int, state: str | None, operator: Actor
) -> None:
    """Preview, then (confirmed) move each selected workflow to `to_version`."""
    check_mode(mode)

    async def work(s: Settings, database_url: str) -> tuple[list[Preview], bool]:
        registry = installed().registry

        def preview(wf: Workflow) -> Preview:
            try:
                source = registry.get(wf.workflow_type, wf.definition_version)
                target = registry.get(wf.workflow_type, to_version)
            except UnknownDefinition as exc:
                return bulk.refused(wf, "unknown_version", str(exc))
            return bulk.preview_migration(source, target, wf, state)

        async def send(p: Preview) -> dict[str, Any]:
            return await migrate(
                s,
                database_url,
                p["workflow_id"],
                to_version=to_version,
                state=state,
                tenant=p["tenant_id"],
                operator=operator,
            )

        return await run(
            database_url,
            chosen,
            mode,
            preview=preview,
            action="migrate-workflow",
            operator=operator.id,
            send=send,
        )

    previews, truncated = with_database(work)
    report(chosen, previews, truncated, mode.json_output)


def _definition(view: Mapping[str, Any]) -> WorkflowDefinition:
    try:
        return installed().registry.get(view["workflow_type"], view["definition_version"])
    except UnknownDefinition as exc:
        raise InvalidSignal(str(exc)) from None
