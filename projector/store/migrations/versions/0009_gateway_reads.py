"""What the gateway may read: one workflow's state and the decision about one of its events.

`interlock_workflow_status` runs with its owner's rights and returns only the state, version
and update time of a workflow (never its data, execution or payloads) and the audited outcome
of one event id (accepted, or refused with its reason, detail and the guards it failed; no
row: not decided yet).
The gateway's role may execute it and read nothing else.

Revision ID: 0009_gateway_reads
Revises: 0008_history
"""

from __future__ import annotations

from interlock.projector.store.migrations.script import run

revision = "0009_gateway_reads"
down_revision = "0008_history"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE FUNCTION interlock_workflow_status(
    p_tenant text, p_workflow_type text, p_workflow_id text, p_event_id text
)
RETURNS TABLE (
    state text, version integer, updated_at timestamptz,
    event_accepted boolean, event_reason text, event_detail text, event_failed_guards text[]
)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
SELECT w.state, w.version, w.updated_at, a.accepted, a.reason, a.detail,
       -- The audit keeps a failed guard as `!name`.
       ARRAY(SELECT substr(g, 2) FROM jsonb_array_elements_text(a.guard_results) g
             WHERE g LIKE '!%')
FROM workflows w
LEFT JOIN LATERAL (
    -- A refusal does not reserve the event id: the same webhook may be accepted later.
    SELECT accepted, reason, detail, guard_results FROM audit
    WHERE audit.workflow_id = w.id AND audit.tenant_id = w.tenant_id
      AND audit.event_id = p_event_id
    ORDER BY accepted DESC, id DESC
    LIMIT 1
) a ON true
WHERE w.tenant_id = p_tenant AND w.workflow_type = p_workflow_type AND w.id = p_workflow_id
$$;
--;
REVOKE ALL ON FUNCTION interlock_workflow_status(text, text, text, text) FROM PUBLIC;
--;
"""

DOWNGRADE = """
DROP FUNCTION interlock_workflow_status(text, text, text, text);
--;
"""


def upgrade() -> None:
    run(UPGRADE)


def downgrade() -> None:
    run(DOWNGRADE)
