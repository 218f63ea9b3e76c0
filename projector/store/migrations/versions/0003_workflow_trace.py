"""Keep the trace context of each workflow's latest transition, so that a signal arriving
without one (a human approving days later) can be linked to the trace it answers.

Revision ID: 0003_workflow_trace
Revises: 0002_timer_notify
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0003_workflow_trace"
down_revision = "0002_timer_notify"
branch_labels = None
depends_on = None


def upgrade() -> None:
    run("ALTER TABLE workflows ADD COLUMN trace_headers jsonb NOT NULL DEFAULT '{}'")


def downgrade() -> None:
    run("ALTER TABLE workflows DROP COLUMN trace_headers")
