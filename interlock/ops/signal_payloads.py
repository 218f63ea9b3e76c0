"""The payload of a signal to a workflow of any type, made from the type's own definition.

The event's payload model (`EventSpec.payload` of the definition version the workflow is pinned
to) says which fields the signal has. Its required fields are filled with what the workflow's
data shows under the same name — through the definition's announcement fields (the values an
approval task showed: a recommendation version, a total), else a top-level data key — so an
approval binds to what was displayed, never to a value the sender invented. The operator's own
values override those; the result is checked against the model before anything is sent, so a
payload the projector would dead-letter is refused here, in one line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel, ValidationError

from interlock.contracts.definition import WorkflowDefinition
from interlock.ops.errors import InvalidSignal, NotAccepted
from interlock.projector.engine.guards import lookup

APPROVING = frozenset({"APPROVED", "REJECTED_BY_REVIEWER", "CHANGES_REQUESTED"})
"""The reviewer's answers: signed by default in an approver's role, any other signal in an
operator's."""


def accepts(definition: WorkflowDefinition, state: str, event: str) -> bool:
    """Whether the table has a row for `event` from `state` (cancellation: where the state is
    cancellable, or defers it)."""
    cancellable = definition.cancellable_states | definition.deferred_cancel_states
    return bool(definition.transitions_from(state, event)) or (
        event == "CANCEL_REQUESTED" and state in cancellable
    )


def signal_model(definition: WorkflowDefinition, event: str) -> type[BaseModel] | None:
    """The payload model of signal `event` (None: the definition does not constrain it)."""
    spec = definition.event(event)
    if spec is None or spec.source != "signal":
        raise InvalidSignal(
            f"{definition.workflow_type} v{definition.version} declares no signal {event}"
        )
    return spec.payload


def shown(definition: WorkflowDefinition, view: Mapping[str, Any]) -> dict[str, Any]:
    """What the workflow's data shows, by field name: its top-level values, then the fields of
    the definition's announcements (those of the current state's last, so they win)."""
    data = view.get("data") or {}
    found: dict[str, Any] = {k: v for k, v in data.items() if not isinstance(v, dict)}
    current = view.get("state")
    ordered = sorted(definition.announcements, key=lambda a: a.state == current)
    for announcement in ordered:
        for name, path in announcement.fields.items():
            value = lookup(data, path)
            if value is not None:
                found[name] = value
    return found


def bound_fields(model: type[BaseModel] | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """The model's required fields whose values the workflow shows."""
    if model is None:
        return {}
    return {
        name: values[name]
        for name, field in model.model_fields.items()
        if field.is_required() and name in values
    }


def payload_for(
    definition: WorkflowDefinition,
    view: Mapping[str, Any],
    event: str,
    given: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The checked payload of `event` to the workflow of `view`: the required fields the
    workflow shows, `defaults` for the fields the model has, and `given` over both. Raises
    `InvalidSignal` naming each refused field."""
    model = signal_model(definition, event)
    fields = model.model_fields if model is not None else {}
    payload = {
        **bound_fields(model, shown(definition, view)),
        **{k: v for k, v in (defaults or {}).items() if k in fields},
        **(given or {}),
    }
    if model is None:
        return payload
    _refuse_unbound(definition, view, event, model, payload)
    try:
        checked = model.model_validate(payload)
    except ValidationError as exc:
        raise InvalidSignal(f"{event} payload: {problems(exc)}") from None
    return checked.model_dump(mode="json", exclude_unset=True, by_alias=True)


def _refuse_unbound(
    definition: WorkflowDefinition,
    view: Mapping[str, Any],
    event: str,
    model: type[BaseModel],
    payload: Mapping[str, Any],
) -> None:
    """Raise `NotAccepted` when required fields are missing and the state takes no `event`
    (a late approval of a workflow cancelled before it showed anything to approve): the
    projector would refuse it for its state whatever the values, and none is invented here."""
    missing = [n for n, f in model.model_fields.items() if f.is_required() and n not in payload]
    state = str(view.get("state"))
    if not missing or accepts(definition, state, event):
        return
    reason = "terminal" if definition.is_terminal(state) else "invalid_transition"
    raise NotAccepted(
        reason,
        f"{state} accepts no {event}, and the workflow shows no {', '.join(missing)} to bind "
        "it to; not sent",
    )


def problems(exc: ValidationError) -> str:
    """The validation errors on one line: each field and what is wrong (never the value)."""
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}" for e in exc.errors()
    )


def given_values(payload_json: str | None, fields: Iterable[str]) -> dict[str, Any]:
    """The operator's values: a `--payload` JSON object, then each `--field KEY=VALUE` over it.
    A VALUE is a string (the model converts numbers and booleans), or JSON when it starts
    with `[` or `{`."""
    found: dict[str, Any] = json_object(payload_json) if payload_json is not None else {}
    for item in fields:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidSignal(f"--field {key!r}: expected KEY=VALUE")
        found[key.strip()] = field_value(key, value)
    return found


def json_object(text: str, option: str = "--payload") -> dict[str, Any]:
    """`text` as a JSON object, or `InvalidSignal` naming `option`."""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidSignal(f"{option} is not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(parsed, dict):
        raise InvalidSignal(f"{option} must be a JSON object")
    return parsed


def field_value(key: str, value: str) -> Any:
    """A typed VALUE: the string itself, or the JSON it holds when it starts with [ or {."""
    if not value.startswith(("[", "{")):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise InvalidSignal(f"--field {key}: a value starting with [ or {{ must be JSON") from None


def default_role(parameters: Mapping[str, Any], event: str) -> str:
    """The role a signal is signed in when none is asked for: for a reviewer's answer the
    approver role with the smallest limit (least privilege), else the first listed approver;
    for anything else `operator` where the type lets operators act, else its first operator
    role. The projector still decides whether the role may."""
    if event in APPROVING:
        limits: Mapping[str, Any] = parameters.get("approver_limits") or {}
        ranked = sorted(limits, key=lambda role: _decimal(limits[role]))
        listed = [*ranked, *parameters.get("approver_roles", ())]
        return listed[0] if listed else "approver"
    operators = list(parameters.get("operator_roles", ()))
    return "operator" if "operator" in operators or not operators else operators[0]


def _decimal(value: Any) -> Decimal:
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return Decimal("Infinity")
