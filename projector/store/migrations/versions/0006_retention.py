"""Retention: finished workflows leave the hot tables for an archive, and old processed
events, refusals and spent timers are forgotten.

`interlock_prune` does it in batches (it runs periodically in the relay's process, as the
relay's role): it moves each workflow that has been terminal long enough, with its audit
trail, into `workflow_archive` (one row each) and deletes its processed events, refusals and
timers; and it deletes processed events, refusals and fired or cancelled timers older than
the retention, of any workflow. The function runs with its owner's rights (SECURITY
DEFINER), so the role that calls it may prune, but may not delete anything else itself.

Revision ID: 0006_retention
Revises: 0005_tenant_keys
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0006_retention"
down_revision = "0005_tenant_keys"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE workflow_archive (
    tenant_id          text NOT NULL,
    id                 text NOT NULL,
    workflow_type      text NOT NULL,
    state              text NOT NULL,
    version            integer NOT NULL,
    definition_version integer NOT NULL,
    data               jsonb NOT NULL,
    execution          jsonb NOT NULL,
    correlation_id     text,
    replays            jsonb NOT NULL,
    audit              jsonb NOT NULL,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    archived_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
--;
CREATE INDEX workflow_archive_id ON workflow_archive (id);
--;
CREATE INDEX workflows_finished ON workflows (updated_at);
--;
CREATE INDEX processed_events_age ON processed_events (processed_at);
--;
CREATE INDEX refused_events_age ON refused_events (refused_at);
--;
CREATE INDEX timers_spent ON timers (updated_at) WHERE status <> 'armed';
--;
CREATE FUNCTION interlock_prune(
    finished_types text[], finished_states text[],
    archive_before timestamptz, forget_before timestamptz, batch integer
) RETURNS TABLE (archived bigint, events bigint, timers bigint)
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
WITH done AS (
    SELECT w.tenant_id, w.id FROM workflows w
    WHERE (w.workflow_type, w.state) IN (SELECT * FROM unnest(finished_types, finished_states))
      AND w.updated_at < archive_before
    ORDER BY w.updated_at
    LIMIT batch
    FOR UPDATE SKIP LOCKED
),
moved AS (
    DELETE FROM workflows w USING done d WHERE w.tenant_id = d.tenant_id AND w.id = d.id
    RETURNING w.*
),
trail AS (
    DELETE FROM audit a USING done d WHERE a.tenant_id = d.tenant_id AND a.workflow_id = d.id
    RETURNING a.*
),
kept AS (
    INSERT INTO workflow_archive (tenant_id, id, workflow_type, state, version,
                                  definition_version, data, execution, correlation_id,
                                  replays, audit, created_at, updated_at)
    SELECT m.tenant_id, m.id, m.workflow_type, m.state, m.version, m.definition_version,
           m.data, m.execution, m.correlation_id, m.replays,
           COALESCE((SELECT jsonb_agg(to_jsonb(t) ORDER BY t.id) FROM trail t
                     WHERE t.tenant_id = m.tenant_id AND t.workflow_id = m.id), '[]'),
           m.created_at, m.updated_at
    FROM moved m
    RETURNING 1
),
events AS (
    DELETE FROM processed_events p
    WHERE EXISTS (SELECT 1 FROM done d WHERE d.tenant_id = p.tenant_id AND d.id = p.workflow_id)
       OR p.ctid IN (SELECT ctid FROM processed_events
                     WHERE processed_at < forget_before LIMIT batch)
    RETURNING 1
),
refusals AS (
    DELETE FROM refused_events r
    WHERE EXISTS (SELECT 1 FROM done d WHERE d.tenant_id = r.tenant_id AND d.id = r.workflow_id)
       OR r.ctid IN (SELECT ctid FROM refused_events WHERE refused_at < forget_before LIMIT batch)
    RETURNING 1
),
spent AS (
    DELETE FROM timers t
    WHERE EXISTS (SELECT 1 FROM done d WHERE d.tenant_id = t.tenant_id AND d.id = t.workflow_id)
       OR t.ctid IN (SELECT ctid FROM timers
                     WHERE status <> 'armed' AND updated_at < forget_before LIMIT batch)
    RETURNING 1
)
SELECT (SELECT count(*) FROM kept),
       (SELECT count(*) FROM events) + (SELECT count(*) FROM refusals),
       (SELECT count(*) FROM spent)
$$;
--;
REVOKE ALL ON FUNCTION interlock_prune(text[], text[], timestamptz, timestamptz, integer)
    FROM PUBLIC;
--;
"""

DOWNGRADE = """
DROP FUNCTION interlock_prune(text[], text[], timestamptz, timestamptz, integer);
--;
DROP INDEX timers_spent;
--;
DROP INDEX refused_events_age;
--;
DROP INDEX processed_events_age;
--;
DROP INDEX workflows_finished;
--;
DROP TABLE workflow_archive;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
