"""The store contract: workflow ids, processed events and refusals are kept per tenant."""

from __future__ import annotations

from interlock.projector.store import WorkflowStore
from interlock.projector.store.records import ProcessedEvent
from tests.support.decisions import TRACE, event, refusal, started, step
from tests.support.payloads import REQUEST
from tests.support.store_contract.common import (
    OTHER_TRACE,
    StoreRecords,
    audited,
    created,
    trace_of,
)


class TenantsContract:
    async def test_two_tenants_keep_their_own_workflow_under_one_id(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        acme = await created(store, "order-7")
        globex = started("order-7", tenant_id="globex", payload={**REQUEST, "amount": "1.00"})

        assert await store.create(globex.decision, globex.event, globex.fingerprint, OTHER_TRACE)

        for start, tenant in ((acme, "acme"), (globex, "globex")):
            stored = await store.load(tenant, "order-7")
            assert stored is not None
            assert (stored.workflow, stored.fingerprint) == (start.workflow, start.fingerprint)
            assert await audited(records, "order-7", tenant) == [(start.event.event_id, True)]
        assert await trace_of(store, "globex", "order-7") == OTHER_TRACE.headers

    async def test_a_workflow_is_invisible_to_another_tenant(self, store: WorkflowStore) -> None:
        await created(store, "order-7")

        assert await store.load("globex", "order-7") is None
        assert await store.load("globex", "order-7", "evt-1") is None
        assert await trace_of(store, "globex", "order-7") == {}

    async def test_an_open_job_is_found_for_its_own_tenant_and_type_only(
        self, store: WorkflowStore
    ) -> None:
        start = await created(store, "order-7")
        [(job_id, job)] = start.decision.workflow.execution.open_jobs.items()

        assert await store.job_stage("acme", "order-7", "support", job_id) == job.stage
        assert await store.job_stage("globex", "order-7", "support", job_id) is None
        assert await store.job_stage("acme", "order-7", "request", job_id) is None
        assert await store.job_stage("acme", "order-7", "support", "another-job") is None
        assert await store.job_stage("acme", "order-8", "support", job_id) is None

    async def test_a_commit_moves_only_its_own_tenants_workflow(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        acme = await created(store, "order-7")
        globex = await created(store, "order-7", tenant_id="globex")
        cancel = event("order-7")

        await store.commit(step(acme.workflow, state="CANCELLED"), cancel, TRACE)

        untouched = await store.load("globex", "order-7", cancel.event_id)
        assert untouched is not None
        assert untouched.workflow == globex.workflow
        assert await audited(records, "order-7", "globex") == [(globex.event.event_id, True)]

    async def test_an_event_id_is_processed_per_tenant(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        acme = await created(store, "order-7")
        globex = await created(store, "order-7", tenant_id="globex")

        await store.commit(step(acme.workflow), event("order-7", event_id="same"), TRACE)
        theirs = event("order-7", event_id="same", tenant_id="globex")
        await store.commit(step(globex.workflow), theirs, TRACE)

        for tenant in ("acme", "globex"):
            stored = await store.load(tenant, "order-7", "same")
            assert stored is not None
            assert (stored.workflow.version, stored.workflow.seen_event_ids) == (
                2,
                frozenset({"same"}),
            )
            assert ProcessedEvent(tenant, "order-7", "same") in await records.processed(
                "order-7", tenant
            )

    async def test_a_refusal_is_audited_for_its_own_tenant_only(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        acme = await created(store, "order-7")
        globex = await created(store, "order-7", tenant_id="globex")
        mine = event("order-7", event_id="same")

        assert await store.reject(acme.workflow, mine, refusal(), TRACE)
        theirs = event("order-7", event_id="same", tenant_id="globex")
        assert await store.reject(globex.workflow, theirs, refusal(), TRACE)

        for start, tenant in ((acme, "acme"), (globex, "globex")):
            assert await audited(records, "order-7", tenant) == [
                (start.event.event_id, True),
                ("same", False),
            ]
