"""What an event becomes before it is decided: its payload checked against the definition, and
the blank workflow a request creates. Pure."""

from __future__ import annotations

from pydantic import ValidationError

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Envelope, summarise, workflow_id_of
from interlock.contracts.errors import MalformedMessage
from interlock.projector.engine import Workflow


def first_checkpoint(definition: WorkflowDefinition, request: Envelope) -> Workflow:
    """The workflow a request creates, as it stands before its first transition."""
    return Workflow(
        workflow_id=workflow_id_of(request),
        workflow_type=definition.workflow_type,
        tenant_id=request.tenant_id,
        state=definition.initial_state,
        version=0,
        definition_version=definition.version,
        correlation_id=request.correlation_id or request.event_id,
    )


def validated(definition: WorkflowDefinition, event: Envelope) -> Envelope:
    """The event with its payload checked against the definition and normalised."""
    spec = definition.event(event.type)
    if spec is None:
        raise MalformedMessage(
            "unknown_type",
            f"{event.type} is not an event of {definition.workflow_type} v{definition.version}",
        )
    if spec.payload is None:
        return event
    try:
        payload = spec.payload.model_validate(event.payload).model_dump(mode="json")
    except ValidationError as exc:
        raise MalformedMessage("schema_mismatch", f"{event.type}: {summarise(exc)}") from exc
    return event.model_copy(update={"payload": payload})
