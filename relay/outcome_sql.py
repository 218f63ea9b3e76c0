"""The outcome SLOs as SQL over the audit trail: every figure is counted from the decisions the
projector committed, within a trailing window of `$1` seconds (`relay.outcomes`).

The definitions' facts are passed as arrays (`unnest`): `kinds` says what each (type, state)
is — `terminal`, `completed` (a terminal whose promise is that the work was done), `review`,
`human` (a wait on a person) or `wait` (another waiting state) — and `signals` lists the
events people and outside systems send. A workflow was *rescued* when it entered its review
state, or accepted such a signal outside a wait on a person (a retry, a resolution, an effect
confirmed by hand): approving an approval is the process, not a rescue.
"""

from __future__ import annotations

KINDS = """kinds AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS k(workflow_type, state, kind)
)"""
SIGNALS = """signals AS (
    SELECT * FROM unnest($5::text[], $6::text[]) AS s(workflow_type, event_type)
)"""
IN_WINDOW = "a.accepted AND a.recorded_at > now() - make_interval(secs => $1)"
MOVED = "a.from_state IS DISTINCT FROM a.to_state"

_FINISHED_FACTS = f"""
WITH {KINDS}, {SIGNALS},
keys AS (  -- evaluated once: the per-row checks below are array lookups
    SELECT array(SELECT workflow_type || '/' || state FROM kinds WHERE kind = 'review') AS review,
           array(SELECT workflow_type || '/' || state FROM kinds WHERE kind = 'human') AS human,
           array(SELECT workflow_type || '/' || event_type FROM signals) AS signal
),
finished AS (
    SELECT a.tenant_id, a.workflow_id, a.workflow_type, a.to_state AS outcome,
           a.recorded_at, bool_or(k.kind = 'completed') AS completed
    FROM audit a
    JOIN kinds k ON k.workflow_type = a.workflow_type AND k.state = a.to_state
                AND k.kind IN ('terminal', 'completed')
    WHERE {IN_WINDOW} AND {MOVED}
    GROUP BY 1, 2, 3, 4, 5
),
facts AS MATERIALIZED (  -- once per workflow, not once per quantile
    SELECT f.*,
        (SELECT min(s.recorded_at) FROM audit s
         WHERE s.workflow_id = f.workflow_id AND s.tenant_id = f.tenant_id AND s.accepted)
            AS started_at,
        EXISTS (
            SELECT 1 FROM audit r
            WHERE r.workflow_id = f.workflow_id AND r.tenant_id = f.tenant_id AND r.accepted
              AND (r.workflow_type || '/' || r.to_state = ANY((SELECT review FROM keys)::text[])
                   OR (r.workflow_type || '/' || r.event_type
                           = ANY((SELECT signal FROM keys)::text[])
                       AND NOT coalesce(r.workflow_type || '/' || r.from_state
                                        = ANY((SELECT human FROM keys)::text[]), false)))
        ) AS rescued
    FROM finished f
)
"""

FINISHED = f"""{_FINISHED_FACTS}SELECT workflow_type, tenant_id, outcome, count(*) AS n,
       count(*) FILTER (WHERE completed AND NOT rescued) AS clean,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM recorded_at - started_at))
           AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM recorded_at - started_at))
           AS p95
FROM facts GROUP BY 1, 2, 3
"""
"""Per (type, tenant, terminal outcome): workflows finished in the window, those completed
without a rescue, and the quantiles of their duration from the first accepted event."""

STARTED = f"""
WITH {KINDS}, {SIGNALS},
starts AS (
    SELECT a.tenant_id, a.workflow_id, a.workflow_type, a.recorded_at, a.id
    FROM audit a
    JOIN kinds k ON k.workflow_type = a.workflow_type AND k.state = a.event_type
                AND k.kind = 'start'
    WHERE {IN_WINDOW}
)
SELECT s.workflow_type, s.tenant_id, count(*) AS n, count(p.at) AS progressed,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM p.at - s.recorded_at))
           AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM p.at - s.recorded_at))
           AS p95
FROM starts s
LEFT JOIN LATERAL (
    SELECT min(n.recorded_at) AS at FROM audit n
    WHERE n.workflow_id = s.workflow_id AND n.tenant_id = s.tenant_id AND n.accepted
      AND n.id > s.id AND n.from_state IS DISTINCT FROM n.to_state
) p ON true
GROUP BY 1, 2
"""
"""Per (type, tenant): workflows started in the window (kind `start` rows carry the start
event in `state`), how many moved again, and the time to that first move (quantiles)."""

WAITS = f"""
WITH {KINDS}, {SIGNALS}
SELECT a.workflow_type, a.tenant_id, a.from_state AS state, k.kind, count(*) AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.recorded_at - e.at))
           AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM a.recorded_at - e.at))
           AS p95
FROM audit a
JOIN kinds k ON k.workflow_type = a.workflow_type AND k.state = a.from_state
            AND k.kind IN ('human', 'wait')
CROSS JOIN LATERAL (
    SELECT p.recorded_at AS at FROM audit p
    WHERE p.workflow_id = a.workflow_id AND p.tenant_id = a.tenant_id AND p.accepted
      AND p.id < a.id AND p.to_state = a.from_state AND p.from_state IS DISTINCT FROM p.to_state
    ORDER BY p.id DESC LIMIT 1
) e
WHERE {IN_WINDOW} AND {MOVED}
GROUP BY 1, 2, 3, 4
"""
"""Per (type, tenant, waiting state): the waits that ended in the window and their length."""

REVIEWS = f"""
WITH {KINDS}, {SIGNALS}
SELECT a.workflow_type, a.tenant_id,
       CASE WHEN a.detail = ANY($7::text[]) THEN a.detail ELSE lower(a.event_type) END AS reason,
       count(*) AS n
FROM audit a
JOIN kinds k ON k.workflow_type = a.workflow_type AND k.state = a.to_state AND k.kind = 'review'
WHERE {IN_WINDOW} AND {MOVED}
GROUP BY 1, 2, 3
"""
"""Entries into manual review in the window, by reason: a reason a definition declares, else
the event that escalated (a stage's free-text reason never becomes a label)."""

RETRIES = """
SELECT a.workflow_type, a.tenant_id, coalesce(a.from_state, '') AS operation, a.error_class,
       count(*) AS n
FROM audit a
WHERE a.error_class IS NOT NULL AND a.recorded_at > now() - make_interval(secs => $1)
GROUP BY 1, 2, 3, 4
"""
"""Stage failures recorded in the window, by the state whose work failed and error class."""

RECONCILED = """
SELECT a.workflow_type, a.tenant_id, a.event_type, count(*) AS n
FROM audit a
WHERE a.accepted AND a.recorded_at > now() - make_interval(secs => $1)
  AND a.event_type = ANY($2::text[])
GROUP BY 1, 2, 3
"""
"""Effects whose unknown outcome was settled in the window, by how (confirm, rerun,
compensate)."""

DUPLICATES = """
WITH commits AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS c(workflow_type, state, event_type)
),
touched AS (
    SELECT DISTINCT a.tenant_id, a.workflow_id, a.workflow_type
    FROM audit a JOIN commits c ON c.workflow_type = a.workflow_type
                              AND c.event_type = a.event_type AND c.state = a.from_state
    WHERE a.accepted AND a.recorded_at > now() - make_interval(secs => $1)
),
repeated AS (  -- only an effect committed more than once is checked against the reruns
    SELECT t.workflow_type, t.tenant_id, t.workflow_id, count(*) AS n
    FROM touched t
    JOIN audit a ON a.workflow_id = t.workflow_id AND a.tenant_id = t.tenant_id AND a.accepted
    JOIN commits c ON c.workflow_type = a.workflow_type AND c.event_type = a.event_type
                  AND c.state = a.from_state
    GROUP BY t.workflow_type, t.tenant_id, t.workflow_id, c.state
    HAVING count(*) > 1
),
duplicated AS (
    SELECT p.workflow_type, p.tenant_id,
           greatest(p.n - 1 - (SELECT count(*) FROM audit r
                               WHERE r.workflow_id = p.workflow_id
                                 AND r.tenant_id = p.tenant_id AND r.accepted
                                 AND r.event_type = $5), 0) AS n
    FROM repeated p
)
SELECT t.workflow_type, t.tenant_id,
       coalesce((SELECT sum(d.n) FROM duplicated d
                 WHERE d.workflow_type = t.workflow_type AND d.tenant_id = t.tenant_id), 0) AS n
FROM (SELECT DISTINCT workflow_type, tenant_id FROM touched) t
"""
"""Per (type, tenant): effects committed more often than once plus the reruns an operator
asked for, among the workflows that committed an effect in the window. Must read zero."""

CONFIDENCE = """
SELECT w.workflow_type, least(ceil((c.value #>> '{}')::float * 10), 10)::int AS bucket,
       count(*) AS n
FROM workflows w, jsonb_path_query(w.data, 'lax $.*.confidence') AS c(value)
WHERE w.updated_at > now() - make_interval(secs => $1) AND jsonb_typeof(c.value) = 'number'
GROUP BY 1, 2
"""
"""The confidences models reported (any `confidence` one level down in workflow data) of the
workflows that moved in the window, in tenths."""

REFUSALS = """
SELECT a.workflow_type, a.tenant_id, coalesce(a.reason, 'unknown') AS reason, count(*) AS n
FROM audit a
WHERE NOT a.accepted AND a.recorded_at > now() - make_interval(secs => $1)
GROUP BY 1, 2, 3
"""
"""Events refused in the window, by the refusal's reason (a code, e.g. `budget_exhausted`)."""

TREND = f"""{_FINISHED_FACTS}
SELECT workflow_type, date_trunc('hour', recorded_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
       count(*) AS n,
       count(*) FILTER (WHERE completed AND NOT rescued) AS clean
FROM facts GROUP BY 1, 2 ORDER BY 1, 2
"""
"""Per (type, UTC hour) of the window: workflows finished and those completed without rescue (the
console's trend)."""
