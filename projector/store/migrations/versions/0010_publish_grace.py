"""The projector publishes what it committed; the relay is the backstop after a grace.

- `outbox.relay_after`: when the relay may publish the row. Rows a projector publishes itself
  right after its commit are written with `now() + grace`; every other row (the sweeper's
  copies, a projector that publishes nothing itself) with `now()`, as before.
- `outbox.published_at`: set once the row is known to be in its stream (by the projector after
  JetStream acknowledged it, or by the relay as it moves its cursor past it). The relay skips
  marked rows; a decision whose workflow still has unmarked rows is not published by the
  projector but left to the relay, which keeps every workflow's messages in commit order.
- The outbox notification fires only for rows the relay may publish at once, so a decision
  the projector publishes itself wakes nobody.

Rows the relay already passed are marked published.

Revision ID: 0010_publish_grace
Revises: 0009_gateway_reads
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0010_publish_grace"
down_revision = "0009_gateway_reads"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE outbox ADD COLUMN published_at timestamptz,
                   ADD COLUMN relay_after timestamptz NOT NULL DEFAULT now();
--;
UPDATE outbox o SET published_at = o.created_at
WHERE EXISTS (SELECT 1 FROM relay_cursor c WHERE (o.txid, o.id) <= (c.txid, c.last_id));
--;
CREATE INDEX outbox_unpublished ON outbox (workflow_id) WHERE published_at IS NULL;
--;
CREATE OR REPLACE FUNCTION interlock_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows WHERE relay_after <= now()) THEN
        PERFORM pg_notify('interlock_outbox', '');
    END IF;
    RETURN NULL;
END $$;
--;
"""

DOWNGRADE = """
CREATE OR REPLACE FUNCTION interlock_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows) THEN
        PERFORM pg_notify('interlock_outbox', '');
    END IF;
    RETURN NULL;
END $$;
--;
DROP INDEX outbox_unpublished;
--;
ALTER TABLE outbox DROP COLUMN relay_after, DROP COLUMN published_at;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
