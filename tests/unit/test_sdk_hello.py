"""A plugin written on the public API, run in-process with `interlock.testing`: the hello
workflow of the fixture distribution, its stage bound to a fake greeter."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hello_workflow import PLUGIN, Greeted, HelloRequest, greet

from interlock import (
    ExternalRejected,
    ExternalUnavailable,
    GuardInput,
    Plugin,
    Workflow,
    check,
    guard,
)
from interlock.testing import MalformedMessage, WorkflowTestEnv


class FakeGreeter:
    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.names: list[str] = []

    async def greet(self, name: str) -> str:
        self.names.append(name)
        if self.failures:
            raise self.failures.pop(0)
        return f"Hello, {name}!"


def env_with(greeter: Any) -> WorkflowTestEnv:
    return WorkflowTestEnv(PLUGIN, adapters={"greeter": greeter})


async def test_a_request_is_greeted_with_the_services_answer() -> None:
    greeter = FakeGreeter()
    env = env_with(greeter)

    wf = await env.start({"name": "Ada"})
    await env.run()

    assert await env.state(wf) == "GREETED"
    assert (await env.data(wf))["greeting"] == {"text": "Hello, Ada!"}
    assert greeter.names == ["Ada"]
    assert [(a.event_type, a.to_state) for a in env.audit(wf)] == [
        ("START", "GREETING"),
        ("GREETED", "GREETED"),
    ]


async def test_an_unavailable_service_is_retried_when_the_backoff_timer_fires() -> None:
    greeter = FakeGreeter(ExternalUnavailable("down"))
    env = env_with(greeter)
    wf = await env.start({"name": "Ada"})

    await env.run()
    assert (await env.state(wf), env.armed_timers(wf)) == ("GREETING", ["retry"])
    await env.advance(0.1)
    assert greeter.names == ["Ada"]  # the backoff has not elapsed
    await env.advance(60)

    assert await env.state(wf) == "GREETED"
    assert greeter.names == ["Ada", "Ada"]


async def test_retries_are_bounded_by_the_policy() -> None:
    greeter = FakeGreeter(*(ExternalUnavailable("down") for _ in range(5)))
    env = env_with(greeter)
    wf = await env.start({"name": "Ada"})

    await env.run()
    for _ in range(5):
        await env.advance(600)

    assert await env.state(wf) == "FAILED"
    assert len(greeter.names) == 3
    assert env.audit(wf)[-1].detail == "retry_exhausted"


async def test_a_refusal_fails_the_workflow_with_its_class() -> None:
    env = env_with(FakeGreeter(ExternalRejected("no", error_class="unknown_person")))
    wf = await env.start({"name": "Ada"})

    await env.run()

    assert await env.state(wf) == "FAILED"
    assert (await env.data(wf)).get("greeting") is None
    assert env.audit(wf)[-1].event_type == "PERMANENT_ERROR"


async def test_an_event_the_definition_does_not_know_is_refused_as_the_runtime_would() -> None:
    env = env_with(FakeGreeter())
    wf = await env.start({"name": "Ada"})

    with pytest.raises(MalformedMessage) as refused:
        await env.send("APPROVED", {}, workflow_id=wf)
    assert refused.value.reason == "unknown_type"


async def test_a_malformed_start_is_refused() -> None:
    env = env_with(FakeGreeter())

    with pytest.raises(MalformedMessage) as refused:
        await env.start({"name": ""})
    assert refused.value.reason == "schema_mismatch"


async def test_a_job_delivered_again_after_the_workflow_moved_on_changes_nothing() -> None:
    greeter = FakeGreeter()
    env = env_with(greeter)
    wf = await env.start({"name": "Ada"})
    await env.run()
    job = next(m for m in env.store.outbox(wf) if m.subject.startswith("wf.job."))

    outcome = await env.deliver(job.body)

    assert (outcome.accepted, outcome.reason) == (False, "duplicate")
    assert await env.state(wf) == "GREETED"


@guard
def not_shouting(g: GuardInput) -> bool:
    return not str(g.payload.get("name", "")).isupper()


def guarded() -> Plugin:
    """hello, with its START accepted only under the plugin's own guard."""
    wf = Workflow("hello", version=1)
    wf.request(HelloRequest)
    wf.result(Greeted, into="greeting")
    wf.failures("PERMANENT_ERROR", "ESCALATE", "RETRYABLE_ERROR")
    wf.states("RECEIVED", "GREETING", "GREETED", "FAILED", terminal=("GREETED", "FAILED"))
    wf.stage("GREETING", greet, inputs=("request",))
    wf.on("RECEIVED", "START", "GREETING", guards=(check("not_shouting"),))
    wf.on("GREETING", Greeted, "GREETED")
    for failure in ("PERMANENT_ERROR", "ESCALATE", "RETRYABLE_ERROR"):
        wf.on("GREETING", failure, "FAILED")
    return dataclasses.replace(PLUGIN, definitions=(wf.build(),), guards=(not_shouting,))


async def test_a_plugin_guard_decides_and_is_audited_by_name() -> None:
    env = WorkflowTestEnv(guarded(), adapters={"greeter": FakeGreeter()})

    with pytest.raises(MalformedMessage) as refused:  # a refused request creates nothing
        await env.start({"name": "ADA"})
    calm = await env.start({"name": "Ada"})
    await env.run()

    assert refused.value.reason == "invalid_request"
    assert "START refused in RECEIVED" in refused.value.detail
    assert await env.state(calm) == "GREETED"
    assert env.audit(calm)[0].guard_results == ("not_shouting",)
