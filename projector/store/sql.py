"""The projector's hot-path statements: one round trip to load, one to commit a decision.

A decision is committed by a single statement whose data-modifying CTEs (the history's row
of the event among them) all hang off the compare-and-set of the workflow row (`w`): if
that matches no row, nothing else is written, and a duplicate event id aborts the whole
statement on the processed-events key. A single statement is atomic, so this is the one
transaction the design requires, without the round trips of BEGIN … COMMIT.

The commit also marks published the rows this projector published (and JetStream
acknowledged) since its previous commit (`marks`, see `projector.outbox`), whether or not its
own compare-and-set matches: no statement of its own for them. A sibling CTE's writes are
invisible to the others, and another commit may be marking rows at the same moment, so
`held` leaves out every row the projector knows it published (`published`) itself.

A paused workflow (a row of `pauses` covering its type, tenant or id, migration 0018) has its
outbox rows written to `held_outbox` instead (`kept_back`), for `resume` to release in order.
The pause row is read `FOR SHARE`, so a resume that deletes it waits for this commit, and then
sees the rows it held. A commit that reads the pause while a resume is deleting it waits for the
resume instead, and then writes to the outbox; its snapshot still shows the rows the resume
released as held, so `held` counts those as behind it too and leaves its rows to the relay,
which publishes them after the released ones (the projector would otherwise publish its own
rows at once, ahead of what was decided before them).

Statements are written with `:name` placeholders and compiled once to asyncpg's `$n`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_PLACEHOLDER = re.compile(r"(?<!:):([a-z_][a-z0-9_]*)")


@dataclass(frozen=True)
class Statement:
    sql: str
    names: tuple[str, ...]

    def args(self, values: Mapping[str, object]) -> list[object]:
        return [values[name] for name in self.names]


def compile_named(sql: str) -> Statement:
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return Statement(_PLACEHOLDER.sub(number, sql), tuple(names))


LOAD = compile_named("""
SELECT w.id, w.workflow_type, w.tenant_id, w.state, w.version, w.definition_version, w.data,
       w.execution, w.fingerprint, w.correlation_id, w.updated_at, w.trace_headers,
       EXISTS (SELECT 1 FROM processed_events p
               WHERE p.tenant_id = w.tenant_id AND p.workflow_id = w.id
                 AND p.event_id = :event_id) AS seen
FROM workflows w WHERE w.tenant_id = :tenant_id AND w.id = :workflow_id
""")

JOB_STAGE = compile_named("""
SELECT w.execution -> 'open_jobs' -> :job_id ->> 'stage'
FROM workflows w
WHERE w.tenant_id = :tenant_id AND w.id = :workflow_id AND w.workflow_type = :workflow_type
""")

_UPDATE = """
WITH w AS (
    UPDATE workflows
    SET state = :state, version = :version, data = :data, execution = :execution,
        definition_version = :definition_version, trace_headers = :trace_headers,
        updated_at = now()
    WHERE tenant_id = :tenant_id AND id = :workflow_id AND version = :version - 1
      AND NOT EXISTS (SELECT 1 FROM processed_events
                      WHERE tenant_id = :tenant_id AND workflow_id = :workflow_id
                        AND event_id = :event_id)
    RETURNING id
)"""

_INSERT = """
WITH w AS (
    INSERT INTO workflows (id, workflow_type, tenant_id, state, version, definition_version,
                           data, execution, trace_headers, fingerprint, correlation_id)
    VALUES (:workflow_id, :workflow_type, :tenant_id, :state, :version, :definition_version,
            :data, :execution, :trace_headers, :fingerprint, :correlation_id)
    ON CONFLICT (tenant_id, id) DO NOTHING
    RETURNING id
)"""

_RECORD = """,
processed AS (
    INSERT INTO processed_events (tenant_id, workflow_id, event_id)
    SELECT :tenant_id, id, :event_id FROM w
),
audited AS (
    INSERT INTO audit (tenant_id, workflow_id, workflow_type, event_id, event_type, from_state,
                       to_state, accepted, detail, actor_id, actor_role, state_version,
                       definition_version, causation_id, correlation_id, trace_id,
                       guard_results, occurred_at, error_class, error_message)
    SELECT :tenant_id, id, :workflow_type, :event_id, :event_type, :from_state, :state, true,
           :detail, :actor_id, :actor_role, :version, :definition_version, :causation_id,
           :audit_correlation_id, :trace_id, :guard_results, :occurred_at, :error_class,
           :error_message
    FROM w
),
marked AS (
    UPDATE outbox SET published_at = now()
    WHERE id = ANY(:marks::bigint[]) AND published_at IS NULL
),
held AS (
    SELECT EXISTS (SELECT 1 FROM outbox
                   WHERE workflow_id = :workflow_id AND published_at IS NULL
                     AND NOT id = ANY(:published::bigint[]))
        OR EXISTS (SELECT 1 FROM held_outbox
                   WHERE workflow_type = :workflow_type AND tenant_id = :tenant_id
                     AND workflow_id = :workflow_id) AS behind
),
paused AS (
    SELECT 1 FROM pauses p
    WHERE p.workflow_type = :workflow_type AND p.tenant_id IN ('', :tenant_id)
      AND p.workflow_id IN ('', :workflow_id)
    FOR SHARE
),
published AS (
    INSERT INTO outbox (subject, headers, body, tenant_id, workflow_id, relay_after)
    SELECT o.subject, o.headers, o.body, :tenant_id, w.id,
           CASE WHEN :publish_grace::float8 IS NULL OR held.behind THEN now()
                ELSE now() + make_interval(secs => :publish_grace::float8) END
    FROM w, held, unnest(:subjects::text[], :headers::jsonb[], :bodies::bytea[])
         WITH ORDINALITY AS o(subject, headers, body, n)
    WHERE NOT EXISTS (SELECT 1 FROM paused)
    ORDER BY o.n
    RETURNING id, relay_after > now() AS deferred
),
kept_back AS (
    INSERT INTO held_outbox (workflow_type, tenant_id, workflow_id, subject, headers, body)
    SELECT :workflow_type, :tenant_id, w.id, o.subject, o.headers, o.body
    FROM w, unnest(:subjects::text[], :headers::jsonb[], :bodies::bytea[])
         WITH ORDINALITY AS o(subject, headers, body, n)
    WHERE EXISTS (SELECT 1 FROM paused)
    ORDER BY o.n
),
armed AS (
    INSERT INTO timers (id, workflow_id, workflow_type, tenant_id, kind, event_type, fire_at,
                        branch, status, armed_version, headers)
    SELECT t.id, w.id, :workflow_type, :tenant_id, t.kind, t.event, t.fire_at, t.branch,
           'armed', :version, :trace_headers
    FROM w, unnest(:timer_ids::text[], :timer_kinds::text[], :timer_events::text[],
                   :timer_fire_at::timestamptz[], :timer_branches::text[])
         AS t(id, kind, event, fire_at, branch)
),
disarmed AS (
    UPDATE timers SET status = 'cancelled', updated_at = now()
    WHERE id = ANY(:cancelled_timers::text[]) AND status = 'armed'
      AND EXISTS (SELECT 1 FROM w)
),
kept AS (
    INSERT INTO history (tenant_id, workflow_id, workflow_type, definition_version, event_id,
                         event_type, event, accepted, reason, from_version, inputs, outcome)
    SELECT :tenant_id, id, :workflow_type, :definition_version, :event_id, :event_type, :event,
           true, NULL, :version - 1, :inputs, :outcome
    FROM w
)"""

_RESULT = """
SELECT (SELECT count(*) FROM w) AS written,
       ARRAY(SELECT id FROM published WHERE deferred ORDER BY id) AS deferred_ids
"""

COMMIT = compile_named(_UPDATE + _RECORD + _RESULT)
CREATE = compile_named(_INSERT + _RECORD + _RESULT)
HEADS = {"commit": _UPDATE, "create": _INSERT}
"""The first CTE of each kind of decision (`batch` joins several decisions' CTEs)."""
RECORD = _RECORD

DUPLICATE = compile_named("""
SELECT EXISTS (
    SELECT 1 FROM workflows w JOIN processed_events p
      ON p.tenant_id = w.tenant_id AND p.workflow_id = w.id AND p.event_id = :event_id
    WHERE w.tenant_id = :tenant_id AND w.id = :workflow_id AND w.version = :version - 1
)
""")
"""Whether a commit that wrote nothing was a duplicate: its workflow still at the version it was
decided on, and its event accepted before (else another transition committed first). Asked
only then: a commit checks it in its compare-and-set (`NOT EXISTS`), so a duplicate fails alone
instead of failing with a unique violation every decision of its group commit."""

REJECT = compile_named("""
WITH at_version AS (
    SELECT NOT :at_version OR (
        EXISTS (
            SELECT 1 FROM workflows
            WHERE tenant_id = :tenant_id AND id = :workflow_id AND version = :version
        ) AND NOT EXISTS (
            SELECT 1 FROM processed_events
            WHERE tenant_id = :tenant_id AND workflow_id = :workflow_id AND event_id = :event_id
        )
    ) AS holds
),
counted AS (
    UPDATE workflows
    SET replays = jsonb_set(
        replays, ARRAY[:reason::text], to_jsonb(COALESCE((replays ->> :reason::text)::int, 0) + 1)
    )
    WHERE :counted AND (SELECT holds FROM at_version) AND tenant_id = :tenant_id
      AND id = :workflow_id
    RETURNING (replays ->> :reason::text)::int AS n
),
refused AS (
    INSERT INTO refused_events (tenant_id, workflow_id, event_id)
    SELECT :tenant_id, :workflow_id, :event_id WHERE NOT :counted AND (SELECT holds FROM at_version)
    ON CONFLICT DO NOTHING
    RETURNING 1
),
audited AS (
    INSERT INTO audit (tenant_id, workflow_id, workflow_type, event_id, event_type, from_state,
                       to_state, accepted, reason, detail, actor_id, actor_role, state_version,
                       definition_version, causation_id, correlation_id, trace_id,
                       guard_results, occurred_at, error_class, error_message)
    SELECT :tenant_id, :workflow_id, :workflow_type, :event_id, :event_type, :from_state, NULL,
           false, :reason, :detail, :actor_id, :actor_role, :version, :definition_version,
           :causation_id, :audit_correlation_id, :trace_id, :guard_results, :occurred_at,
           :error_class, :error_message
    WHERE EXISTS (SELECT 1 FROM refused) OR EXISTS (SELECT 1 FROM counted WHERE n = 1)
    RETURNING 1
),
kept AS (
    INSERT INTO history (tenant_id, workflow_id, workflow_type, definition_version, event_id,
                         event_type, event, accepted, reason, from_version, inputs, outcome)
    SELECT :tenant_id, :workflow_id, :workflow_type, :definition_version, :event_id, :event_type,
           :event, false, :reason, :version, :inputs, :outcome
    FROM audited
)
SELECT (SELECT count(*) FROM audited) AS audited, (SELECT holds FROM at_version) AS held
""")

DECIDED = compile_named("""
SELECT event FROM history
WHERE tenant_id = :tenant_id AND workflow_id = :workflow_id AND event_id = :event_id AND accepted
LIMIT 1
""")

HISTORY = compile_named("""
SELECT tenant_id, workflow_id, workflow_type, definition_version, event, accepted, reason,
       from_version, inputs, outcome, recorded_at
FROM history WHERE tenant_id = :tenant_id AND workflow_id = :workflow_id ORDER BY seq
""")
