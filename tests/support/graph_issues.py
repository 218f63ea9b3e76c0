"""What the graph check finds wrong with a definition, by issue code."""

from __future__ import annotations

from interlock.contracts.graphcheck import check
from interlock.definition import WorkflowDefinition
from interlock.projector.engine import ACTIONS, GUARDS


def issue_codes(definition: WorkflowDefinition) -> set[str]:
    """The codes of every issue the graph check reports for `definition`."""
    return {issue.code for issue in check(definition, GUARDS, ACTIONS)}
