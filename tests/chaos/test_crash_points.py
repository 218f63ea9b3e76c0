"""Kill -9 at every boundary of every effectful stage of every type, and of the relay, the
timer service and the projector: exactly one effect each time, and the workflow reaches
the outcome it would have reached without the crash, its audit gapless.

Each test arms one crash point (`messaging.crashpoints`); the component that reaches it
dies by SIGKILL there and is restarted by the supervisor."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import pytest

from interlock.config.access import job_signing_key
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.contracts.registry import Registry
from interlock.messaging.crashpoints import arm, armed
from interlock.projector.service import Projector
from interlock.projector.signing import JobSigner
from interlock.projector.store.postgres import open_store
from interlock.simulators import effect_rows, notification_count, reversal_count, seed_customer
from interlock.tools.demo import casedrive
from interlock.tools.demo.casefile import SHIPPED, load
from interlock.tools.demo.runner import Run, approve
from interlock.tools.demo.scenarios import REQUEST
from tests.support.chaos_stack import Stack
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(150)
BOUNDARIES = ("before_call", "after_effect", "after_result")


def _gapless(view: dict[str, Any]) -> bool:
    versions = [a["state_version"] for a in view["audit"] if a["accepted"]]
    return versions == list(range(1, len(versions) + 1))


async def _fired(stack: Stack, point: str) -> None:
    async def gone() -> bool:
        return not armed(stack.crash_dir, point)

    await eventually(gone, what=f"a crash at {point}", within=60)


@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("stage", ["execute_action", "notify_customer", "compensate"])
async def test_a_support_stage_killed_at_a_boundary_makes_exactly_one_effect(
    stack: Stack, stage: str, boundary: str
) -> None:
    point = f"support.{stage}.{boundary}"
    compensating = stage == "compensate"
    arm(stack.crash_dir, point)
    run = await stack.workflow(faults={"execute": ["mismatch"]} if compensating else None)
    await approve(run, await asyncio.wait_for(run.next_task(), 60))

    done = await asyncio.wait_for(
        run.wait_state("FAILED_COMPENSATED" if compensating else "COMPLETED"), 90
    )

    await _fired(stack, point)
    assert await stack.effects(run) == 1
    assert await reversal_count(stack.dsn, customer_id=run.customer_id) == int(compensating)
    if stage == "notify_customer":
        assert await notification_count(stack.dsn, customer_id=run.customer_id) == 1
    assert _gapless(done)


@pytest.mark.parametrize("boundary", BOUNDARIES)
async def test_the_request_effect_killed_at_a_boundary_happens_exactly_once(
    stack: Stack, boundary: str
) -> None:
    point = f"request.execute_effect.{boundary}"
    arm(stack.crash_dir, point)
    case = next(c for c in load(SHIPPED).cases if c.id == "case-01")
    sub = casedrive.submission(case, "crash-points", f"cp-{boundary}")
    assert sub.workflow_id is not None
    await casedrive.publish(stack.bus, sub, f"cp-{boundary}")

    view = await asyncio.wait_for(
        casedrive.state_in(stack.engine, sub.workflow_id, casedrive.TERMINAL), 90
    )

    await _fired(stack, point)
    assert view["state"] == "completed"
    assert len(await effect_rows(stack.dsn, [sub.workflow_id])) == 1
    assert _gapless(view)


@pytest.mark.parametrize(
    ("points", "faults"),
    [
        # The relay publishes only what the projector left: a projector killed between its
        # commit and its publish gives it a row, and the relay is killed after publishing it.
        (("projector.before_publish", "relay.after_publish"), None),
        (("projector.before_publish",), None),
        (("projector.before_commit",), None),
        (("projector.after_commit",), None),
        (("timer.after_publish",), {"inspect": ["timeout", "ok"]}),  # a retry timer fires
    ],
)
async def test_a_core_component_killed_at_its_boundary_loses_and_doubles_nothing(
    stack: Stack, points: tuple[str, ...], faults: dict[str, list[str]] | None
) -> None:
    for point in points:
        arm(stack.crash_dir, point)
    run = await stack.workflow(faults=faults)
    await approve(run, await asyncio.wait_for(run.next_task(), 60))

    done = await asyncio.wait_for(run.wait_state("COMPLETED"), 90)

    for point in points:
        await _fired(stack, point)
    assert await stack.effects(run) == 1
    assert _gapless(done)
    accepted = [a["event_id"] for a in done["audit"] if a["accepted"]]
    assert len(accepted) == len(set(accepted))  # every accepted event in the history once
    events = [a["event_type"] for a in done["audit"] if a["accepted"]]
    if faults:
        assert events.count("RETRY_DUE") == 1


async def test_a_restart_during_a_deployment_finishes_old_and_new_versions_alike(
    stack: Stack,
) -> None:
    """A workflow an older release started (definition v1) and one the new release started
    (the latest) are both in flight when every component is killed and restarted: each finishes
    under its own definition, with one effect."""
    old = await _started_by_an_older_release(stack)
    new = await stack.workflow()
    old_task, new_task = await asyncio.gather(
        asyncio.wait_for(old.next_task(), 60), asyncio.wait_for(new.next_task(), 60)
    )

    for name in stack.supervisor.pids():
        with contextlib.suppress(LookupError):
            stack.supervisor.kill(name)
    await asyncio.gather(approve(old, old_task), approve(new, new_task))

    done = await asyncio.gather(
        asyncio.wait_for(old.wait_state("COMPLETED"), 90),
        asyncio.wait_for(new.wait_state("COMPLETED"), 90),
    )
    assert [d["definition_version"] for d in done] == [1, REGISTRY.latest("support").version]
    assert [await stack.effects(r) for r in (old, new)] == [1, 1]
    assert all(_gapless(d) for d in done)


async def _started_by_an_older_release(stack: Stack) -> Run:
    """What a projector that knew only v1 committed: the workflow, its audit and first job."""
    customer = f"old-{uuid.uuid4().hex[:8]}"
    await seed_customer(stack.dsn, customer)
    run = Run("deploy", "", "chaos", customer, stack.bus, stack.engine, stack.dsn)
    event_id = f"old-release-{uuid.uuid4()}"
    run.workflow_id = workflow_id_for("support", run.tenant_id, event_id)
    stack.desk.watch(run)
    older_release = Registry(d for d in REGISTRY if d.version == 1)
    store = await open_store(stack.dsn)
    try:
        await Projector(
            store, registry=older_release, signer=JobSigner(job_signing_key(stack.settings))
        ).handle(
            Envelope(
                event_id=event_id,
                type="START",
                workflow_type="support",
                tenant_id=run.tenant_id,
                actor=Actor(id="older-crm", role="upstream"),
                occurred_at=utcnow(),
                payload={**REQUEST, "customer_id": customer},
            )
        )
    finally:
        await store.close()
    return run
