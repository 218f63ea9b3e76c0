"""The audit keeps why a stage failed.

- `audit.error_class`: the stable code of a stage's failure (`ErrorReport.error_class`, or an
  escalation's `reason`) on the row of the result that reported it.
- `audit.error_message`: the stage's redacted description of it (`ValueError: boom`), bounded
  by the stage runtime; never a payload value.

Both are NULL on every other row, and on the rows written before.

Revision ID: 0011_audit_error
Revises: 0010_publish_grace
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0011_audit_error"
down_revision = "0010_publish_grace"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE audit ADD COLUMN error_class text, ADD COLUMN error_message text;
--;
"""

DOWNGRADE = """
ALTER TABLE audit DROP COLUMN error_message, DROP COLUMN error_class;
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
