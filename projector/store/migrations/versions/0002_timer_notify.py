"""Wake the timer service when a timer is armed: NOTIFY interlock_timers on insert.

Revision ID: 0002_timer_notify
Revises: 0001_core
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0002_timer_notify"
down_revision = "0001_core"
branch_labels = None
depends_on = None

UPGRADE = """
-- Once per writing statement (NOTIFY folds duplicates within a transaction), delivered at
-- commit: a timer armed for the near future wakes a service sleeping until its poll.
CREATE FUNCTION interlock_timers_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('interlock_timers', '');
    RETURN NULL;
END $$;
--;
CREATE TRIGGER timers_notify AFTER INSERT ON timers
    FOR EACH STATEMENT EXECUTE FUNCTION interlock_timers_notify();
--;
"""

DOWNGRADE = """
DROP TRIGGER timers_notify ON timers;
--;
DROP FUNCTION interlock_timers_notify();
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
