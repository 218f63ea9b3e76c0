"""The eleven shipped request cases, and cases of our own in their format, through the whole
stack: `interlock demo --fixture PATH --json` as a real process, running its components as
real processes against the test's NATS and PostgreSQL. The outcomes and counters it prints
are checked against those the case file's own runner reports, and the effect ledger is
audited here independently."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from interlock.config import access
from interlock.simulators import effect_rows
from interlock.tools.demo.casefile import SHIPPED
from tests.conftest import clean_broker
from tests.support.workflow_rows import workflow_views

pytestmark = pytest.mark.timeout(180)
EXTRA = Path(__file__).parents[1] / "data" / "request_extra_cases.json"
SEED_SUMMARY = {
    "cases": 11,
    "completed": 4,
    "approval_required": 2,
    "policy_blocks": 1,
    "idempotent_replays": 1,
    "idempotency_conflicts": 1,
    "bounded_retries": 1,
    "checkpoint_resumes": 2,
    "controlled_failures": 4,
    "authorized_effects": 4,
    "unauthorized_effects": 0,
}
EXTRA_SUMMARY = {
    "cases": 5,
    "completed": 1,
    "approval_required": 1,
    "policy_blocks": 0,
    "idempotent_replays": 1,
    "idempotency_conflicts": 0,
    "bounded_retries": 1,
    "checkpoint_resumes": 0,
    "controlled_failures": 3,
    "authorized_effects": 1,
    "unauthorized_effects": 0,
}


@dataclass
class Run:
    exit_code: int
    printed: dict[str, Any]
    views: dict[str, dict[str, Any]]
    ledger: list[dict[str, Any]]

    def case(self, case_id: str) -> dict[str, Any]:
        return next(c for c in self.printed["cases"] if c["id"] == case_id)

    def view(self, case_id: str) -> dict[str, Any]:
        return self.views[self.case(case_id)["workflow_id"]]


async def _demo(path: Path, nats_url: str, database_url: str, home: Path) -> Run:
    """Run the CLI on a clean broker, then read what it left in the store and the ledger."""
    await clean_broker(nats_url)
    env = {
        **os.environ,
        # The server alone: the demo connects as the installation's clients (upstream,
        # approvals), whose names the projector checks, and administers as admin.
        "INTERLOCK_NATS_URL": access.without_credentials(nats_url),
        "INTERLOCK_DATABASE_URL": database_url,
        "INTERLOCK_HOME": str(home),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "interlock", "demo", "--fixture", str(path), "--json",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 150)
    assert out, err.decode(errors="replace")[-2000:]
    printed = json.loads(out)
    ids = sorted({c["workflow_id"] for c in printed["cases"] if c["workflow_id"]})
    views = {w: v for w, v in (await workflow_views(database_url, ids)).items() if v}
    return Run(process.returncode or 0, printed, views, await effect_rows(database_url, ids))


@pytest.fixture(scope="module")
async def seed(
    module_nats: str, module_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Run:
    return await _demo(SHIPPED, module_nats, module_database, tmp_path_factory.mktemp("seed"))


@pytest.fixture(scope="module")
async def extra(
    module_nats: str, module_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Run:
    return await _demo(EXTRA, module_nats, module_database, tmp_path_factory.mktemp("extra"))


SEED_CASES = [c["id"] for c in json.loads(SHIPPED.read_text())["cases"]]
EXTRA_CASES = [c["id"] for c in json.loads(EXTRA.read_text())["cases"]]


@pytest.mark.parametrize("case_id", SEED_CASES)
def test_every_seed_case_reaches_its_outcome(seed: Run, case_id: str) -> None:
    case = seed.case(case_id)
    assert case["outcome"] == case["expected"]


def test_the_seed_summary_is_the_seed_runners_exactly(seed: Run) -> None:
    assert seed.printed["summary"] == SEED_SUMMARY
    assert list(seed.printed["summary"]) == list(SEED_SUMMARY)
    assert seed.exit_code == 0


@pytest.mark.parametrize("case_id", EXTRA_CASES)
def test_every_extra_case_reaches_its_outcome(extra: Run, case_id: str) -> None:
    case = extra.case(case_id)
    assert case["outcome"] == case["expected"]


def test_the_extra_summary_counts_what_happened(extra: Run) -> None:
    assert (extra.printed["summary"], extra.exit_code) == (EXTRA_SUMMARY, 0)


def _authority(effect: dict[str, Any], view: dict[str, Any]) -> dict[str, Any] | None:
    wanted = effect["authorized_by"]["authorization_id"]
    return next((a for a in view["audit"] if a["event_id"] == wanted and a["accepted"]), None)


@pytest.mark.parametrize("run", ["seed", "extra"])
def test_each_effect_is_in_the_ledger_once_under_an_authority_on_record(
    run: str, request: pytest.FixtureRequest
) -> None:
    result: Run = request.getfixturevalue(run)
    per_run = Counter(e["workflow_id"] for e in result.ledger)
    completed = {w for w, v in result.views.items() if v["state"] == "completed"}
    assert set(per_run) == completed
    assert set(per_run.values()) == {1}
    for effect in result.ledger:
        authority = _authority(effect, result.views[effect["workflow_id"]])
        tenant = result.views[effect["workflow_id"]]["tenant_id"]
        assert authority is not None, effect
        assert (authority["event_type"], authority["to_state"]) == (
            "EFFECT_AUTHORIZED",
            "executing",
        )
        assert (
            effect["idempotency_key"]
            == f"request-effect:{tenant}:{effect['workflow_id']}:{effect['effect']}"
        )


def test_an_approved_effect_was_authorised_by_a_bound_approval(seed: Run) -> None:
    (effect,) = [e for e in seed.ledger if e["workflow_id"] == seed.case("case-07")["workflow_id"]]
    trail = [
        (a["event_type"], a["to_state"]) for a in seed.view("case-07")["audit"] if a["accepted"]
    ]
    assert effect["authorized_by"]["basis"] == "approval"
    assert trail[-3:] == [
        ("APPROVED", "approved"),
        ("EFFECT_AUTHORIZED", "executing"),
        ("EFFECT_EXECUTED", "completed"),
    ]


def test_the_resumed_run_continued_from_its_checkpoint_with_one_routing(seed: Run) -> None:
    trail = seed.view("case-09")["audit"]
    accepted = [a["event_type"] for a in trail if a["accepted"]]
    assert accepted[accepted.index("REQUEST_CLASSIFIED") :] == [
        "REQUEST_CLASSIFIED", "RESUME", "EFFECT_AUTHORIZED", "EFFECT_EXECUTED",
    ]  # fmt: skip
    resume = next(a for a in trail if a["event_type"] == "RESUME")
    assert (resume["from_state"], resume["actor"]["role"]) == ("classified", "operator")


def test_the_replays_and_the_conflict_left_the_first_run_alone(seed: Run) -> None:
    view = seed.view("case-01")
    starts = [(a["accepted"], a["reason"]) for a in view["audit"] if a["event_type"] == "START"]
    assert starts == [(True, None), (False, "idempotent_replay"), (False, "idempotency_conflict")]
    assert view["data"]["request"]["subject"] == "Access question"


def test_the_out_of_order_command_was_refused_and_the_run_then_cancelled(seed: Run) -> None:
    """Request v3: the command to execute before authorisation changes nothing (no accepted
    row to `failed`); the case runner then cancels the run, which did nothing."""
    view = seed.view("case-11")
    trail = [(a["event_type"], a["accepted"], a["reason"], a["to_state"]) for a in view["audit"]]
    assert ("EXECUTE_REQUESTED", False, "invalid_transition", None) in trail
    assert [t for t in trail if t[1] and t[3] == "failed"] == []
    assert (view["state"], view["definition_version"]) == ("cancelled", 3)
    assert [e for e in seed.ledger if e["workflow_id"] == view["workflow_id"]] == []


def test_every_run_records_the_versions_it_ran_under(seed: Run) -> None:
    versions = seed.view("case-04")["data"]["versions"]
    assert versions == {
        "workflow": "workflow-1",
        "normalization": "normalize-1",
        "classifier": "recorded-classifier-1",
        "prompt": "request-classify-v1",
        "policy": "policy-1",
    }
    assert all("workflow" in v["data"].get("versions", {}) for v in seed.views.values())


def test_a_request_breaking_the_transport_contract_creates_nothing(extra: Run) -> None:
    case = extra.case("unknown-source")
    assert (case["outcome"], case["workflow_id"]) == ("invalid_event", None)
