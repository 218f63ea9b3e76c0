"""Tenant-scoped keys, refusals that reserve nothing, repeated requests counted.

- A workflow is identified by its tenant and its id: two tenants may use the same business
  key, and neither can find, squat on or learn of the other's workflows.
- Processed events are kept per tenant and hold accepted events only: a refused event is
  recorded in `refused_events` (so a redelivery is not audited twice) and its id stays free,
  so nobody can pre-spend the id of an event that has not happened yet.
- The audit and the outbox name the tenant of every row.
- `workflows.replays` counts repeated requests (an identical request again, or a changed one
  under the same key) by reason: the first of each is audited, the rest only counted, so a
  flood of repeats cannot grow a workflow's audit trail.

Revision ID: 0005_tenant_keys
Revises: 0004_quiet_notify
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0005_tenant_keys"
down_revision = "0004_quiet_notify"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE workflows DROP CONSTRAINT workflows_pkey;
--;
ALTER TABLE workflows ADD PRIMARY KEY (tenant_id, id);
--;
CREATE INDEX workflows_id ON workflows (id);
--;
ALTER TABLE workflows ADD COLUMN replays jsonb NOT NULL DEFAULT '{}';
--;

ALTER TABLE audit ADD COLUMN tenant_id text;
--;
UPDATE audit a SET tenant_id = w.tenant_id FROM workflows w WHERE w.id = a.workflow_id;
--;
UPDATE audit SET tenant_id = '' WHERE tenant_id IS NULL;
--;
ALTER TABLE audit ALTER COLUMN tenant_id SET NOT NULL;
--;
DROP INDEX audit_workflow;
--;
CREATE INDEX audit_workflow ON audit (workflow_id, tenant_id, id);
--;

ALTER TABLE outbox ADD COLUMN tenant_id text;
--;

CREATE TABLE refused_events (
    tenant_id   text NOT NULL,
    workflow_id text NOT NULL,
    event_id    text NOT NULL,
    refused_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, workflow_id, event_id)
);
--;
ALTER TABLE processed_events ADD COLUMN tenant_id text;
--;
UPDATE processed_events p SET tenant_id = w.tenant_id FROM workflows w WHERE w.id = p.workflow_id;
--;
DELETE FROM processed_events WHERE tenant_id IS NULL;
--;
INSERT INTO refused_events (tenant_id, workflow_id, event_id, refused_at)
SELECT tenant_id, workflow_id, event_id, processed_at FROM processed_events WHERE NOT accepted;
--;
DELETE FROM processed_events WHERE NOT accepted;
--;
ALTER TABLE processed_events DROP CONSTRAINT processed_events_pkey;
--;
ALTER TABLE processed_events DROP COLUMN accepted;
--;
ALTER TABLE processed_events ALTER COLUMN tenant_id SET NOT NULL;
--;
ALTER TABLE processed_events ADD PRIMARY KEY (tenant_id, workflow_id, event_id);
--;
CREATE INDEX timers_tenant_workflow ON timers (tenant_id, workflow_id);
--;
DROP INDEX timers_workflow;
--;
"""

DOWNGRADE = """
CREATE INDEX timers_workflow ON timers (workflow_id);
--;
DROP INDEX timers_tenant_workflow;
--;
ALTER TABLE processed_events DROP CONSTRAINT processed_events_pkey;
--;
ALTER TABLE processed_events ADD COLUMN accepted boolean NOT NULL DEFAULT true;
--;
ALTER TABLE processed_events DROP COLUMN tenant_id;
--;
ALTER TABLE processed_events ADD PRIMARY KEY (workflow_id, event_id);
--;
DROP TABLE refused_events;
--;
ALTER TABLE outbox DROP COLUMN tenant_id;
--;
DROP INDEX audit_workflow;
--;
CREATE INDEX audit_workflow ON audit (workflow_id, id);
--;
ALTER TABLE audit DROP COLUMN tenant_id;
--;
ALTER TABLE workflows DROP COLUMN replays;
--;
DROP INDEX workflows_id;
--;
ALTER TABLE workflows DROP CONSTRAINT workflows_pkey;
--;
ALTER TABLE workflows ADD PRIMARY KEY (id);
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
