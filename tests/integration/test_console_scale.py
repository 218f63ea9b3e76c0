"""The console's queries with 100,000 workflows: every page's statements read the workflows
and the audit through indexes (EXPLAIN), and every page answers quickly."""

from __future__ import annotations

import time
from pathlib import Path

import asyncpg
import pytest

from interlock.config.settings import Settings
from interlock.console import reads
from interlock.ops import queries
from tests.support.console import asgi_client, console_settings, log_in
from tests.support.plans import captured, explain, sequential_scans
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(240)
WORKFLOWS = 100_000
STATES = ["COMPLETED"] * 6 + ["AWAITING_APPROVAL", "MANUAL_REVIEW", "CLASSIFYING", "REJECTED"]

FILL = """
INSERT INTO workflows (id, workflow_type, tenant_id, state, version, definition_version,
                       data, execution, fingerprint, created_at, updated_at)
SELECT 'wf-' || lpad(i::text, 6, '0'),
       'support',
       (ARRAY['acme', 'globex', 'initech'])[1 + i % 3],
       ($1::text[])[1 + i % array_length($1::text[], 1)],
       9, 2,
       jsonb_build_object('request', jsonb_build_object('subject', 'Refund ' || i,
                          'body', repeat('I was charged twice. ', 12))),
       '{}', 'f',
       now() - make_interval(secs => i * 3),
       now() - make_interval(secs => i * 3)
FROM generate_series(1, $2) AS i
"""
AUDIT = """
INSERT INTO audit (workflow_id, tenant_id, workflow_type, event_id, event_type, from_state,
                   to_state, accepted, reason, actor_id, actor_role, state_version, guard_results,
                   occurred_at, recorded_at)
SELECT 'wf-' || lpad(i::text, 6, '0'), (ARRAY['acme', 'globex', 'initech'])[1 + i % 3],
       'support', 'e-' || i, 'START', 'REQUEST_RECEIVED',
       'CLASSIFYING', i % 10 <> 0, CASE WHEN i % 10 = 0 THEN 'guard_rejected' END,
       'crm', 'upstream', 1, '[]', now() - make_interval(secs => i * 3),
       now() - make_interval(secs => i * 3)
FROM generate_series(1, $1) AS i
"""


@pytest.fixture
async def crowded(database_url: str) -> str:
    db = await asyncpg.connect(database_url)
    try:
        await db.execute(FILL, STATES, WORKFLOWS)
        await db.execute(AUDIT, WORKFLOWS)
        await db.execute("VACUUM ANALYZE workflows")
        await db.execute("VACUUM ANALYZE audit")
    finally:
        await db.close()
    return database_url


FILTERS = {
    "newest": reads.Filters(),
    "type and state": reads.Filters(workflow_type="support", state="COMPLETED"),
    "state of any type": reads.Filters(state="MANUAL_REVIEW"),
    "tenant": reads.Filters(tenant="globex"),
    "waiting on a human": reads.Filters(human=True),
    "stuck": reads.Filters(stuck=True),
    "id prefix": reads.Filters(search="wf-0420"),
    "a later page": reads.Filters(before="2020-01-01T00:00:00+00:00~wf-050000"),
}


async def test_every_console_query_reads_through_an_index(crowded: str) -> None:
    engine = queries.open_reader(crowded, pool_size=2)
    try:
        async with captured(engine) as statements:
            for f in FILTERS.values():
                await reads.list_workflows(engine, f, registry=REGISTRY, stuck_after=300.0)
            await reads.state_counts(engine, reads.Filters(tenant="acme"), registry=REGISTRY)
            await reads.state_counts(engine, reads.Filters(), registry=REGISTRY)
            await reads.human_tasks(engine, registry=REGISTRY)
            await reads.activity(engine)
            await reads.refusals(engine)
            await queries.workflow_view(engine, "wf-004200")
            await queries.workflow_view(engine, "wf-004200", "acme")
        assert len(statements) >= len(FILTERS) + 6
        for statement in statements:
            plan = await explain(engine, statement)
            assert sequential_scans(plan, {"workflows", "audit"}) == [], statement[0]
    finally:
        await engine.dispose()


async def test_every_page_answers_quickly_with_many_workflows(
    crowded: str, nats_url: str, tmp_path: Path
) -> None:
    settings = console_settings(Settings(home=tmp_path))
    async with asgi_client(settings, nats_url, crowded) as client:
        await log_in(client, "victor")
        pages = [
            "/",
            "/?human=1",
            "/?stuck=1",
            "/?tenant=acme&state=COMPLETED",
            "/?q=wf-01",
            "/tasks",
            "/operations",
            "/workflows/acme/wf-000003",
        ]
        for page in pages:
            started = time.perf_counter()
            response = await client.get(page)
            seconds = time.perf_counter() - started
            assert response.status_code == 200, page
            assert seconds < 2.0, f"{page} took {seconds:.2f}s"
