"""Core schema: workflows, audit, processed events, outbox with commit-safe ordering, timers.

Revision ID: 0001_core
Revises:
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0001_core"
down_revision = None
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE interlock_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
--;
-- A random id for this database, prefixed to outbox message ids so that a database rebuilt
-- from scratch can never collide with the broker's deduplication window of an older one.
INSERT INTO interlock_meta VALUES ('instance', substr(md5(random()::text), 1, 12));
--;

CREATE TABLE workflows (
    id                 text PRIMARY KEY,
    workflow_type      text NOT NULL,
    tenant_id          text NOT NULL,
    state              text NOT NULL,
    version            integer NOT NULL CHECK (version >= 0),
    definition_version integer NOT NULL,
    data               jsonb NOT NULL,
    execution          jsonb NOT NULL,
    fingerprint        text NOT NULL,
    correlation_id     text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
--;
CREATE INDEX workflows_type_state ON workflows (workflow_type, state);
--;

CREATE TABLE audit (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_id        text NOT NULL,
    workflow_type      text NOT NULL,
    event_id           text NOT NULL,
    event_type         text NOT NULL,
    from_state         text,
    to_state           text,
    accepted           boolean NOT NULL,
    reason             text,
    detail             text,
    actor_id           text NOT NULL,
    actor_role         text NOT NULL,
    state_version      integer NOT NULL,
    definition_version integer,
    causation_id       text,
    correlation_id     text,
    trace_id           text,
    guard_results      jsonb NOT NULL DEFAULT '[]',
    occurred_at        timestamptz NOT NULL,
    recorded_at        timestamptz NOT NULL DEFAULT now()
);
--;
CREATE INDEX audit_workflow ON audit (workflow_id, id);
--;

-- Deduplication is per workflow: two tenants' systems may well reuse an event id.
CREATE TABLE processed_events (
    workflow_id  text NOT NULL,
    event_id     text NOT NULL,
    accepted     boolean NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, event_id)
);
--;

-- txid orders rows by the transaction that wrote them; the relay only reads rows below the
-- oldest transaction still running (pg_snapshot_xmin), so a transaction that commits late
-- can never leave a row behind the relay's cursor.
CREATE TABLE outbox (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    txid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
    subject     text NOT NULL,
    headers     jsonb NOT NULL DEFAULT '{}',
    body        bytea NOT NULL,
    workflow_id text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
--;
CREATE INDEX outbox_commit_order ON outbox (txid, id);
--;

-- Wake the relay once per writing statement; NOTIFY folds duplicates within a transaction.
CREATE FUNCTION interlock_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('interlock_outbox', '');
    RETURN NULL;
END $$;
--;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION interlock_outbox_notify();
--;

CREATE TABLE relay_cursor (
    name       text PRIMARY KEY,
    txid       xid8 NOT NULL,
    last_id    bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
--;

CREATE TABLE timers (
    id            text PRIMARY KEY,
    workflow_id   text NOT NULL,
    workflow_type text NOT NULL,
    tenant_id     text NOT NULL,
    kind          text NOT NULL,
    event_type    text NOT NULL,
    fire_at       timestamptz NOT NULL,
    branch        text,
    status        text NOT NULL CHECK (status IN ('armed', 'published', 'cancelled')),
    armed_version integer NOT NULL,
    headers       jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
--;
CREATE INDEX timers_due ON timers (fire_at) WHERE status = 'armed';
--;
CREATE INDEX timers_workflow ON timers (workflow_id);
--;
"""

DOWNGRADE = """
DROP TABLE timers;
--;
DROP TABLE relay_cursor;
--;
DROP TABLE outbox;
--;
DROP FUNCTION interlock_outbox_notify();
--;
DROP TABLE processed_events;
--;
DROP TABLE audit;
--;
DROP TABLE workflows;
--;
DROP TABLE interlock_meta;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
