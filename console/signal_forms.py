"""The form of a console action, built from its signal's payload model (its pydantic JSON
schema) in the definition version the workflow is pinned to, for any workflow type.

A required field whose value the page shows (an approval's recommendation version, an
invoice's total) travels as a hidden input holding that value: the signal is bound to what the
operator saw, and the projector refuses it if the workflow has moved on since. Any other
required field, and every optional text field (a reason, a comment), is an input the operator
fills; optional fields of other kinds are left to the model's defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from interlock.contracts.definition import WorkflowDefinition
from interlock.ops.signal_payloads import bound_fields, field_value, shown, signal_model

PREFIX = "p."


@dataclass(frozen=True)
class FormField:
    name: str
    label: str
    value: str = ""
    hidden: bool = False
    required: bool = False

    @property
    def input_name(self) -> str:
        return PREFIX + self.name


def form_fields(
    definition: WorkflowDefinition, view: Mapping[str, Any], event: str
) -> list[FormField]:
    """The inputs of the form that sends `event` to the workflow of `view`."""
    model = signal_model(definition, event)
    if model is None:
        return []
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    bound = bound_fields(model, shown(definition, view))
    found: list[FormField] = []
    for name, spec in (schema.get("properties") or {}).items():
        label = str(spec.get("title") or name.replace("_", " ").capitalize())
        if name in bound:
            found.append(FormField(name, label, _text(bound[name]), hidden=True, required=True))
        elif name in required or _is_text(spec):
            found.append(FormField(name, label, required=name in required))
    return found


def submitted(model: type[BaseModel] | None, form: Mapping[str, Any]) -> dict[str, Any]:
    """The values a posted form gives for the model's fields (an empty input gives none).
    Inputs are named `PREFIX + field`, so no payload field can collide with the form's own
    `action`, `next` or `csrf_token`."""
    names = list(model.model_fields) if model is not None else []
    values = {name: str(form.get(PREFIX + name, "")) for name in names}
    return {name: field_value(name, value) for name, value in values.items() if value != ""}


def _is_text(spec: Mapping[str, Any]) -> bool:
    """A string field (possibly nullable): one an operator types freely."""
    kinds = [spec, *spec.get("anyOf", ())]
    types = {k.get("type") for k in kinds if k.get("type")}
    return "string" in types and types <= {"string", "null"}


def _text(value: Any) -> str:
    """A shown value as a hidden input holds it: a string as it is, a structure as JSON (read
    back by `submitted`), anything else as its text."""
    if isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, dict | list | bool) else str(value)
