"""The history: every decided event, accepted or refused, with its payload, the inputs the
decision read and a digest of what it produced, written by the decision's own statement.

`interlock replay` re-decides these with the installed definitions and reports every event
whose outcome came out differently. `interlock_prune_history` forgets the histories of
workflows that have not moved for the history retention (whole histories, so every history
that remains starts with its workflow's request); it runs in the relay's process with its
owner's rights, as `interlock_prune` does.

Revision ID: 0008_history
Revises: 0007_console_indexes
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0008_history"
down_revision = "0007_console_indexes"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE history (
    seq                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id          text NOT NULL,
    workflow_id        text NOT NULL,
    workflow_type      text NOT NULL,
    definition_version integer NOT NULL,
    event_id           text NOT NULL,
    event_type         text NOT NULL,
    event              jsonb NOT NULL,
    accepted           boolean NOT NULL,
    reason             text,
    from_version       integer NOT NULL,
    inputs             jsonb NOT NULL,
    outcome            jsonb NOT NULL,
    recorded_at        timestamptz NOT NULL DEFAULT now()
);
--;
CREATE INDEX history_workflow ON history (tenant_id, workflow_id, seq);
--;
CREATE INDEX history_type ON history (workflow_type, recorded_at);
--;
CREATE INDEX history_age ON history (recorded_at);
--;
CREATE FUNCTION interlock_prune_history(forget_before timestamptz, batch integer)
RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
WITH still AS (
    SELECT DISTINCT tenant_id, workflow_id FROM history WHERE recorded_at >= forget_before
),
idle AS (
    SELECT DISTINCT h.tenant_id, h.workflow_id FROM history h
    WHERE h.recorded_at < forget_before
      AND NOT EXISTS (SELECT 1 FROM still s
                      WHERE s.tenant_id = h.tenant_id AND s.workflow_id = h.workflow_id)
    LIMIT batch
),
forgotten AS (
    DELETE FROM history h USING idle i
    WHERE h.tenant_id = i.tenant_id AND h.workflow_id = i.workflow_id
    RETURNING 1
)
SELECT (SELECT count(*) FROM idle)
$$;
--;
REVOKE ALL ON FUNCTION interlock_prune_history(timestamptz, integer) FROM PUBLIC;
--;
"""

DOWNGRADE = """
DROP FUNCTION interlock_prune_history(timestamptz, integer);
--;
DROP TABLE history;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
