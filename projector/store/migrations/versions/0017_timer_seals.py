"""A seal per timer: the secret half of its firing's message id.

A timer firing's event id derives from the timer id, which anyone who read the workflow's
announcements can compute; the inbound stream deduplicates by message id across every
subject, so a client publishing first under that id had the real firing dropped. The timer
service publishes under `<event id>.<seal>` instead (`ids.sealed_message_id`), the seal drawn
here from the database's strong random source when the row is armed, readable by components
only, and the same on every firing of the row (so a re-fired timer is still deduplicated).

Revision ID: 0017_timer_seals
Revises: 0012_human_waits
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0017_timer_seals"
down_revision = "0012_human_waits"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE timers
    ADD COLUMN seal text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '');
--;
"""

DOWNGRADE = """
ALTER TABLE timers DROP COLUMN seal;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
