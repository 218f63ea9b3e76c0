"""Reminders of waits on a person: how many a wait has had, so a restart never announces
them all again.

- `human_wait_reminders`: one row per workflow (its current wait), naming the state and the
  state version the wait began at; a wait at a newer version starts counting afresh. The
  relay's reminder pass writes it in the transaction that adds the reminder's outbox row, and
  deletes rows whose workflow has moved on, so the table holds only current waits.

Revision ID: 0012_human_waits
Revises: 0011_audit_error
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0012_human_waits"
down_revision = "0011_audit_error"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE human_wait_reminders (
    tenant_id        text NOT NULL,
    workflow_id      text NOT NULL,
    state            text NOT NULL,
    state_version    integer NOT NULL,
    reminders        integer NOT NULL CHECK (reminders >= 0),
    last_reminded_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, workflow_id)
);
--;
"""

DOWNGRADE = """
DROP TABLE human_wait_reminders;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
