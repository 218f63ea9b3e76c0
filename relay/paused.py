"""What the relay's passes leave alone while a workflow is paused (migration 0018).

A pause covers a workflow type, one tenant of it or one workflow (`projector.store.pauses`).
While it does, the commit holds its decisions' outbox rows back, and every pass of the relay
that would otherwise send something for a workflow of its own accord skips it: the timer
service leaves its due timers armed, the sweeper does not re-dispatch its open jobs, and the
reminders of its overdue waits on a person wait too (a reminder must not go out before the
held announcement it repeats). Each pass picks it up again once it is resumed.
"""

from __future__ import annotations


def not_paused(table: str, workflow_id: str = "workflow_id") -> str:
    """The SQL condition that no pause covers the workflow of a row of `table` (an alias
    with `workflow_type` and `tenant_id` columns, its workflow's id in `workflow_id`)."""
    return f"""NOT EXISTS (
    SELECT 1 FROM pauses p
    WHERE p.workflow_type = {table}.workflow_type AND p.tenant_id IN ('', {table}.tenant_id)
      AND p.workflow_id IN ('', {table}.{workflow_id}))"""
