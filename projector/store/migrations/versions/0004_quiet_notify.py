"""Notify only when rows were really inserted, and tell the timer service when.

Every decision is one statement whose CTEs insert into `outbox` and `timers`, usually zero
timer rows. A statement-level trigger fires even for zero rows, so the timer service was woken
(and queried the database) on every transition. The triggers now look at the inserted rows
(transition tables): no rows, no notification; and the timer notification carries the
earliest new `fire_at` (epoch seconds), so the timer service can reschedule without a query.

Revision ID: 0004_quiet_notify
Revises: 0003_workflow_trace
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0004_quiet_notify"
down_revision = "0003_workflow_trace"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE OR REPLACE FUNCTION interlock_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows) THEN
        PERFORM pg_notify('interlock_outbox', '');
    END IF;
    RETURN NULL;
END $$;
--;
DROP TRIGGER outbox_notify ON outbox;
--;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION interlock_outbox_notify();
--;
CREATE OR REPLACE FUNCTION interlock_timers_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    earliest timestamptz;
BEGIN
    SELECT min(fire_at) INTO earliest FROM new_rows;
    IF earliest IS NOT NULL THEN
        PERFORM pg_notify('interlock_timers', extract(epoch FROM earliest)::text);
    END IF;
    RETURN NULL;
END $$;
--;
DROP TRIGGER timers_notify ON timers;
--;
CREATE TRIGGER timers_notify AFTER INSERT ON timers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION interlock_timers_notify();
--;
"""

DOWNGRADE = """
DROP TRIGGER timers_notify ON timers;
--;
CREATE OR REPLACE FUNCTION interlock_timers_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('interlock_timers', '');
    RETURN NULL;
END $$;
--;
CREATE TRIGGER timers_notify AFTER INSERT ON timers
    FOR EACH STATEMENT EXECUTE FUNCTION interlock_timers_notify();
--;
DROP TRIGGER outbox_notify ON outbox;
--;
CREATE OR REPLACE FUNCTION interlock_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('interlock_outbox', '');
    RETURN NULL;
END $$;
--;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION interlock_outbox_notify();
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
