"""Every workflow definition Interlock can execute, old versions included.

A workflow records the definition version it started with and is always decided by that
version, so a deployment never silently reinterprets an in-flight workflow.
"""

from __future__ import annotations

from functools import cache

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.errors import UnknownDefinition
from interlock.contracts.request import REQUEST_V1
from interlock.contracts.support import SUPPORT_V1, SUPPORT_V2

DEFINITIONS: dict[tuple[str, int], WorkflowDefinition] = {
    (d.workflow_type, d.version): d for d in (SUPPORT_V1, SUPPORT_V2, REQUEST_V1)
}


def get(workflow_type: str, version: int) -> WorkflowDefinition:
    try:
        return DEFINITIONS[(workflow_type, version)]
    except KeyError:
        raise UnknownDefinition(f"no definition {workflow_type!r} v{version}") from None


@cache  # DEFINITIONS never changes; the projector asks on every event (failures are not kept)
def latest(workflow_type: str) -> WorkflowDefinition:
    """The version new workflows of this type start with."""
    versions = [v for (t, v) in DEFINITIONS if t == workflow_type]
    if not versions:
        known = workflow_types()
        raise UnknownDefinition(f"unknown workflow type {workflow_type!r}; known: {known}")
    return DEFINITIONS[(workflow_type, max(versions))]


def workflow_types() -> list[str]:
    return sorted({t for t, _ in DEFINITIONS})


_EVENTS = frozenset((t, e.name) for (t, _), d in DEFINITIONS.items() for e in d.events)


def knows_event(workflow_type: str, event_type: str) -> bool:
    """Whether any version of `workflow_type` defines `event_type`."""
    return (workflow_type, event_type) in _EVENTS
