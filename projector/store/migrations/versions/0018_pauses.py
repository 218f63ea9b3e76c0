"""Pause and resume: what is paused, the jobs held back while it is, and the operator's log.

- `pauses`: one row per paused scope — a workflow type, optionally narrowed to a tenant and to
  one workflow ('' = every tenant, every workflow), with who paused it, why and since when.
- `held_outbox`: the outbox rows of decisions committed while their workflow was paused. The
  commit writes them here instead of into `outbox`, in the same statement as the state, so a
  paused workflow's jobs are durable but never dispatched. Resuming moves them into the outbox
  in the order they were held (one transaction), where the relay publishes them.
- `operator_log`: every pause, resume and bulk change, with the operator and the selection.

Revision ID: 0018_pauses
Revises: 0017_timer_seals
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0018_pauses"
down_revision = "0017_timer_seals"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE pauses (
    workflow_type text NOT NULL,
    tenant_id     text NOT NULL DEFAULT '',
    workflow_id   text NOT NULL DEFAULT '',
    paused_at     timestamptz NOT NULL DEFAULT now(),
    paused_by     text NOT NULL,
    reason        text NOT NULL DEFAULT '',
    PRIMARY KEY (workflow_type, tenant_id, workflow_id)
);
--;
CREATE TABLE held_outbox (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_type text NOT NULL,
    tenant_id     text NOT NULL,
    workflow_id   text NOT NULL,
    subject       text NOT NULL,
    headers       jsonb NOT NULL DEFAULT '{}',
    body          bytea NOT NULL,
    held_at       timestamptz NOT NULL DEFAULT now()
);
--;
CREATE INDEX held_outbox_scope ON held_outbox (workflow_type, tenant_id, workflow_id);
--;
CREATE TABLE operator_log (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    operator      text NOT NULL,
    action        text NOT NULL,
    selection     jsonb NOT NULL DEFAULT '{}',
    workflow_type text,
    tenant_id     text,
    workflow_id   text,
    event_id      text,
    outcome       text NOT NULL,
    detail        text
);
--;
CREATE INDEX operator_log_workflow ON operator_log (workflow_id, recorded_at);
--;
"""

DOWNGRADE = """
DROP TABLE operator_log;
--;
DROP TABLE held_outbox;
--;
DROP TABLE pauses;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
