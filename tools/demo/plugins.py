"""The installed plugins' own scenarios (`Plugin.scenarios`), run beside the built-in ones.

Nothing here knows a workflow type: each scenario is published as its type's upstream would
publish it, its workflow's announcements (`wf.out.<type>.…`) are routed to it by workflow id,
its signals go out as the approvals client, and it is judged by its own checks.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
from nats.aio.msg import Msg
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock._sdk.scenarios import Scenario
from interlock.config.plugins import installed
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.demo.results import ScenarioResult

SCENARIO_TIMEOUT = 120.0


@dataclass(frozen=True)
class PluginScenario:
    """One plugin's scenario under the name the demo shows: `<type>.<name>`."""

    workflow_type: str
    scenario: Scenario

    @property
    def name(self) -> str:
        return f"{self.workflow_type}.{self.scenario.name}"

    @property
    def expected(self) -> str:
        return self.scenario.expected


def plugin_scenarios(only: list[str] | None = None) -> list[PluginScenario]:
    """Every installed plugin's scenarios (those named in `only`, by name or by type)."""
    found = [
        PluginScenario(loaded.plugin.workflow_type, sc)
        for loaded in installed().plugins.values()
        for sc in loaded.plugin.scenarios
    ]
    return [s for s in found if not only or s.name in only or s.workflow_type in only]


def scenario_parameters() -> dict[str, dict[str, Any]]:
    """The demo's parameter overrides of every type that ships scenarios."""
    return {
        t: dict(loaded.plugin.scenario_parameters)
        for t, loaded in installed().plugins.items()
        if loaded.plugin.scenario_parameters
    }


@dataclass
class PluginRun:
    """A `ScenarioRun`: one plugin scenario's live handle on the real stack."""

    name: str
    workflow_type: str
    tenant_id: str
    home: Path
    bus: Clients
    engine: AsyncEngine
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    workflow_id: str = ""
    state: str = "PUBLISHED"
    announcements: dict[str, asyncio.Queue[dict[str, Any]]] = field(default_factory=dict)
    on_start: Callable[[PluginRun, str], None] = lambda run, workflow_id: None

    async def start(self, payload: Mapping[str, Any]) -> str:
        event = Envelope(
            event_id=f"demo-req-{uuid.uuid4()}",
            type="START",
            workflow_type=self.workflow_type,
            tenant_id=self.tenant_id,
            actor=Actor(id="demo-upstream", role="upstream"),
            occurred_at=utcnow(),
            payload=dict(payload),
        )
        workflow_id = installed().registry.workflow_id(event)
        self.on_start(self, workflow_id)
        await self.bus.publish(event)
        return workflow_id

    async def view(self, workflow_id: str | None = None) -> dict[str, Any] | None:
        return await queries.workflow_view(self.engine, workflow_id or self.workflow_id)

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], *, workflow_id: str | None = None
    ) -> dict[str, Any]:
        while True:
            view = await self.view(workflow_id)
            if view is not None:
                if workflow_id in (None, self.workflow_id):
                    self.state = view["state"]
                if predicate(view):
                    return view
            await asyncio.sleep(0.05)

    async def wait_state(self, *states: str, workflow_id: str | None = None) -> dict[str, Any]:
        return await self.wait_for(lambda v: v["state"] in states, workflow_id=workflow_id)

    def queue(self, name: str) -> asyncio.Queue[dict[str, Any]]:
        return self.announcements.setdefault(name, asyncio.Queue())

    async def announcement(self, name: str) -> dict[str, Any]:
        return await self.queue(name).get()

    async def signal(self, event_type: str, payload: Mapping[str, Any], *, role: str) -> str:
        event = Envelope(
            event_id=f"demo-sig-{uuid.uuid4()}",
            type=event_type,
            workflow_type=self.workflow_type,
            workflow_id=self.workflow_id,
            tenant_id=self.tenant_id,
            actor=Actor(id=f"demo-{role}", role=role),
            occurred_at=utcnow(),
            payload=dict(payload),
        )
        await self.bus.publish(event)
        return event.event_id


class Announcements:
    """Routes every announcement of the scenarios' types to the run of its workflow."""

    def __init__(self, bus: Clients, workflow_types: set[str]) -> None:
        self._bus = bus
        self._types = sorted(workflow_types)
        self._runs: dict[str, PluginRun] = {}
        self._subs: list[Any] = []

    def watch(self, run: PluginRun, workflow_id: str) -> None:
        self._runs[workflow_id] = run

    async def start(self) -> None:
        js = self._bus.approvals.jetstream()
        for workflow_type in self._types:
            self._subs.append(
                await js.subscribe(
                    subjects.out(workflow_type, ">"),
                    ordered_consumer=True,
                    deliver_policy=nats.js.api.DeliverPolicy.NEW,
                    cb=self._on_announcement,
                )
            )

    async def _on_announcement(self, msg: Msg) -> None:
        event = Envelope.model_validate_json(msg.data)
        workflow_id = event.workflow_id or str(event.payload.get("workflow_id"))
        run = self._runs.get(workflow_id)
        if run is not None:
            await run.queue(msg.subject.rsplit(".", 1)[-1]).put(dict(event.payload))

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()


async def play(
    entry: PluginScenario, run: PluginRun, track: Callable[[PluginRun], None]
) -> ScenarioResult:
    """Publish the scenario's request, run its script, judge the workflow it ends on."""
    sc = entry.scenario
    track(run)
    started = time.monotonic()
    try:
        async with asyncio.timeout(SCENARIO_TIMEOUT):
            run.workflow_id = await run.start(sc.request(run.token))
            if sc.script is None:
                await run.wait_state(sc.expected)
            else:
                await sc.script(run)
    except TimeoutError:
        run.state = f"{run.state} (timed out)"
    except Exception as exc:  # a script's own failure is this scenario's mismatch, no more
        run.state = f"{run.state} (script failed: {type(exc).__name__})"
    view = await run.view()
    failed = [
        name for name, check in sc.checks if view is None or not await _holds(check, run, view)
    ]
    return ScenarioResult.judged(
        entry.name,
        sc.expected,
        view,
        workflow_id=run.workflow_id,
        seconds=time.monotonic() - started,
        failed_checks=failed,
    )


async def _holds(check: Any, run: PluginRun, view: dict[str, Any]) -> bool:
    try:
        held = check(run, view)
        return bool(await held) if inspect.isawaitable(held) else bool(held)
    except Exception:  # a check that cannot be evaluated has not held
        return False
