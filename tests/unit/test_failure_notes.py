"""The failure class is kept: the engine notes every stage failure it accepts in
`data.last_error` (state, stage, event, error class, failing system, redacted message) for any
workflow type, the audit row of the failure keeps its `error_class` and message, and neither
changes a decision: a replay of recorded histories finds no divergence."""

from __future__ import annotations

from typing import Any

from hello_workflow import PLUGIN

from interlock.definition import Transition
from interlock.errors import ExternalUnavailable
from interlock.projector.digest import outcome
from interlock.projector.engine.model import Accepted, Workflow
from interlock.projector.replay import replay
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.testing import WorkflowTestEnv
from tests.support.direct import accepted, answer, checkpoint
from tests.support.loose import loose
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY


class Greeter:
    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)

    async def greet(self, name: str) -> str:
        if self.failures:
            raise self.failures.pop(0)
        return f"Hello, {name}!"


def env_with(*failures: Exception) -> WorkflowTestEnv:
    return WorkflowTestEnv(PLUGIN, adapters={"greeter": Greeter(*failures)})


async def test_a_buggy_stage_fails_the_workflow_at_once_with_its_error_kept() -> None:
    env = env_with(ValueError("boom"))
    wf = await env.start({"name": "Ada"})

    await env.run()

    assert await env.state(wf) == "FAILED"
    assert (await env.data(wf))["last_error"] == {
        "state": "GREETING",
        "stage": "greet",
        "event": "PERMANENT_ERROR",
        "error_class": "value_error",
        "system": "greet",
        "message": "ValueError: boom",
    }
    failed = env.audit(wf)[-1]
    assert (failed.event_type, failed.error_class, failed.error_message) == (
        "PERMANENT_ERROR",
        "value_error",
        "ValueError: boom",
    )


async def test_a_workflow_waiting_to_retry_shows_why() -> None:
    env = env_with(ExternalUnavailable("down"))
    wf = await env.start({"name": "Ada"})

    await env.run()

    assert env.armed_timers(wf) == ["retry"]
    last_error = loose(await env.data(wf))["last_error"]
    assert (last_error["event"], last_error["error_class"], last_error["system"]) == (
        "RETRYABLE_ERROR",
        "greet_unavailable",
        "greet",
    )
    assert env.audit(wf)[-1].error_class == "greet_unavailable"


async def test_rows_of_events_that_report_no_failure_keep_no_error_class() -> None:
    env = env_with()
    wf = await env.start({"name": "Ada"})

    await env.run()

    assert [(a.error_class, a.error_message) for a in env.audit(wf)] == [(None, None)] * 2
    assert "last_error" not in await env.data(wf)


async def test_the_failure_note_changes_no_decision_a_replay_compares() -> None:
    env = env_with(ExternalUnavailable("down"))
    wf = await env.start({"name": "Ada"})
    await env.run()
    await env.advance(600)
    history = await env.store.history(env.tenant_id, wf)
    assert await env.state(wf) == "GREETED"

    replayed = replay(history, env.registry)
    before_the_note = [h for h in history if h.event["type"] == "RETRYABLE_ERROR"]

    assert (replayed.complete, replayed.divergences) == (True, ())
    assert before_the_note
    assert all(h.outcome["accepted"] for h in before_the_note)


def test_the_data_a_replay_compares_leaves_the_note_out() -> None:
    noted = _data_digest({"greeting": {"text": "hi"}, "last_error": {"error_class": "x"}})

    assert noted == _data_digest({"greeting": {"text": "hi"}})
    assert noted != _data_digest({"greeting": {"text": "hello"}})


def _data_digest(data: dict[str, Any]) -> str:
    """The data digest a history records for a decision that left `data`."""
    wf = Workflow(
        workflow_id="w",
        workflow_type="t",
        tenant_id="a",
        state="S",
        version=2,
        definition_version=1,
        data=data,
    )
    row = Transition(source="S", event="E", target="S")
    decided = Accepted(workflow=wf, from_state="S", transition=row)
    digest: str = outcome(decided)["data"]
    return digest


async def test_a_support_workflow_in_retry_wait_keeps_the_error_class_and_system() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY)
    start = envelope("START", workflow_id="wf-r", payload=PAYLOADS["START"])
    await accepted(projector.handle(start))
    failure = {"error_class": "classifier_timeout", "system": "classifier"}

    await accepted(answer(projector, store, "wf-r", "RETRYABLE_ERROR", failure))

    wf = await checkpoint(store, "wf-r")
    assert wf.state == "RETRY_WAIT"
    assert {k: wf.data["last_error"][k] for k in ("event", "error_class", "system")} == {
        "event": "RETRYABLE_ERROR",
        "error_class": "classifier_timeout",
        "system": "classifier",
    }
    assert store.audit("wf-r", "acme")[-1].error_class == "classifier_timeout"
