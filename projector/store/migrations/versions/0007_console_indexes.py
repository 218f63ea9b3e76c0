"""Indexes for the operator console's pages, so they stay fast with many workflows.

- newest first, keyset-paginated by `(updated_at, id)`: overall, per (type, state) (also the
  per-state counts and the "waiting on a human" and "stuck" filters, which are lists of
  (type, state) pairs), and per tenant (with its own per-state counts);
- an id search by prefix (`LIKE 'abc%'` needs the pattern operator class under a
  non-C collation);
- the audit by commit time, for the decisions and refusals of the last hour.

The older `workflows_type_state` index is covered by `workflows_type_state_updated`.

Revision ID: 0007_console_indexes
Revises: 0006_retention
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0007_console_indexes"
down_revision = "0006_retention"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE INDEX workflows_updated ON workflows (updated_at DESC, id DESC);
--;
CREATE INDEX workflows_type_state_updated
    ON workflows (workflow_type, state, updated_at DESC, id DESC);
--;
CREATE INDEX workflows_tenant_updated ON workflows (tenant_id, updated_at DESC, id DESC);
--;
CREATE INDEX workflows_tenant_type_state ON workflows (tenant_id, workflow_type, state);
--;
CREATE INDEX workflows_id_prefix ON workflows (id text_pattern_ops);
--;
DROP INDEX workflows_type_state;
--;
CREATE INDEX audit_recorded ON audit (recorded_at);
--;
"""

DOWNGRADE = """
DROP INDEX audit_recorded;
--;
CREATE INDEX workflows_type_state ON workflows (workflow_type, state);
--;
DROP INDEX workflows_id_prefix;
--;
DROP INDEX workflows_tenant_type_state;
--;
DROP INDEX workflows_tenant_updated;
--;
DROP INDEX workflows_type_state_updated;
--;
DROP INDEX workflows_updated;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
