"""The outcome SLOs counted from the audit trail against a real PostgreSQL, as the relay's
role: completion without rescue, durations by outcome, time to first progress, waits on a
person apart from other waits, manual reviews by reason, retries by operation and error class,
reconciliations, duplicate effects (zero unless an effect was committed twice) and model
confidence."""

from __future__ import annotations

import asyncpg
import pytest

from interlock.config.access import DATABASE_ROLES, with_credentials
from interlock.config.components import database_access
from interlock.config.secrets import Secrets
from interlock.projector.store.roles import RELAY_ROLE, provision_roles
from interlock.relay.outcomes import Outcomes, Sample
from tests.support.audit_rows import (
    APPROVED,
    DONE,
    EXECUTED,
    MOVED,
    START,
    TO_APPROVAL,
    Step,
    trail,
)
from tests.support.workflow_rows import insert_workflow
from tests.support.workflows import REGISTRY


@pytest.fixture
async def relay_url(database_url: str, session_secrets: Secrets) -> str:
    passwords = session_secrets.postgres_passwords(list(DATABASE_ROLES))
    await provision_roles(database_url, passwords, database_access())
    return with_credentials(database_url, RELAY_ROLE, passwords[RELAY_ROLE])


def _points(sample: Sample, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(labels.items())): value for value, labels in sample.points[name]}


def _one(sample: Sample, name: str, **labels: str) -> float:
    return _points(sample, name)[tuple(sorted(labels.items()))]


async def test_the_outcome_slos_are_counted_from_the_committed_decisions(
    db: asyncpg.Connection, relay_url: str
) -> None:
    happy = [START, MOVED, TO_APPROVAL, APPROVED, EXECUTED, DONE]
    await trail(db, "clean", happy)
    reviewed = [
        START,
        MOVED,
        ("ESCALATE", "CLASSIFYING", "MANUAL_REVIEW", 580),
        ("RESOLVED", "MANUAL_REVIEW", "COMPLETED", 80),
    ]
    await trail(db, "rescued", reviewed, at=2, detail="low_classification_confidence")
    await trail(db, "escalated", [START, ("ESCALATE", "REQUEST_RECEIVED", "MANUAL_REVIEW", 550)],
                 detail="a stage's own words")  # fmt: skip
    await trail(db, "failing", [START, ("RETRYABLE_ERROR", "CLASSIFYING", "RETRY_WAIT", 400)],
                 error_class="TimeoutError")  # fmt: skip
    await trail(db, "twice", [START, EXECUTED, EXECUTED])
    await trail(db, "other-tenant", [START, ("REJECTED", "REQUEST_RECEIVED", "REJECTED", 300)],
                 tenant="globex")  # fmt: skip
    await trail(db, "long-ago", [("START", None, "REQUEST_RECEIVED", 9000)])
    await db.execute(
        "INSERT INTO audit (tenant_id, workflow_id, workflow_type, event_id, event_type, "
        "accepted, reason, actor_id, actor_role, state_version, occurred_at) VALUES ('acme', "
        "'clean', 'support', 'refused', 'CLASSIFIED', false, 'budget_exhausted', 'a', 'r', 1, "
        "now())"
    )
    await insert_workflow(db, "sure", "AWAITING_APPROVAL")
    await db.execute(
        'UPDATE workflows SET data = \'{"classification": {"confidence": 0.93}}\' '
        "WHERE id = 'sure'"
    )

    sample = await Outcomes(relay_url, registry=REGISTRY, window=3600).sample()

    acme = {"workflow_type": "support", "tenant": "acme"}
    assert _one(sample, "finished", **acme, outcome="COMPLETED") == 2
    assert _one(sample, "completed_unrescued", **acme) == 1  # the reviewed one was rescued
    assert _one(sample, "completion_ratio", **acme) == 0.5
    assert _one(sample, "completion_ratio", workflow_type="support", tenant="globex") == 0
    assert _one(sample, "duration", **acme, outcome="COMPLETED", quantile="0.5") == (
        pytest.approx(510, abs=2)  # 500 s (clean) and 520 s (rescued)
    )
    assert _one(sample, "started", **acme) == 5  # not the one started before the window
    # 10 s (clean, rescued), 50 s (escalated), 200 s (failing), 450 s (twice)
    assert _one(sample, "first_progress", **acme, quantile="0.5") == pytest.approx(50, abs=1)
    wait = {**acme, "state": "AWAITING_APPROVAL", "human": "true"}
    assert _one(sample, "wait", **wait, quantile="0.95") == pytest.approx(300, abs=2)
    assert _points(sample, "manual_reviews") == {
        tuple(sorted({**acme, "reason": "low_classification_confidence"}.items())): 1,
        tuple(sorted({**acme, "reason": "escalate"}.items())): 1,  # free text is no label
    }
    assert _one(sample, "manual_review_ratio", **acme) == pytest.approx(2 / 5)
    failure = {**acme, "operation": "CLASSIFYING", "error_class": "TimeoutError"}
    assert _one(sample, "retries", **failure) == 1
    assert _one(sample, "duplicate_effects", **acme) == 1  # "twice" committed its action twice
    assert _one(sample, "model_confidence", workflow_type="support", tenth="1.0") == 1
    assert "reconciliations" not in sample.points
    assert _points(sample, "refusals") == {
        tuple(sorted({**acme, "reason": "budget_exhausted"}.items())): 1
    }


async def test_duplicate_effects_read_zero_when_each_effect_committed_once_or_was_rerun(
    db: asyncpg.Connection, relay_url: str
) -> None:
    await trail(db, "once", [START, EXECUTED])
    rerun: Step = ("EFFECT_RERUN_REQUESTED", "EXECUTING_ACTION", "EXECUTING_ACTION", 140)
    await trail(db, "rerun", [START, EXECUTED, rerun, EXECUTED])

    sample = await Outcomes(relay_url, registry=REGISTRY, window=3600).sample()

    assert _one(sample, "duplicate_effects", workflow_type="support", tenant="acme") == 0
    assert (
        _one(sample, "reconciliations", workflow_type="support", tenant="acme", outcome="rerun")
        == 1
    )
