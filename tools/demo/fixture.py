"""The shipped request cases (or any case file in their format) through the real stack.

Every case is published as an upstream would publish it, in file order, and then driven
concurrently. A case reusing an event id (a replay, a conflict) is published only once the
projector has decided the previous use: the projector's consumer does not yet keep one
workflow's messages in stream order within a fetched batch, so "published later" alone
would not mean "decided later".

Two scenarios need timing that the stack's own speed would otherwise decide:
- `resume` is a real crash: the route service is held down (killed, kept down) before
  anything is published, the run is resumed by an operator once its classification is
  committed (the checkpoint), and only then is the service let back up — so `RESUME` is
  always decided at the checkpoint, and the job issued before the crash is stale when the
  restarted service finds it;
- `state_conflict`: the validate service is held down likewise, and once the request is
  decided an upstream commands execution, so the command always meets the run in
  `received` (not right behind the request, for the reason above). Request v3 refuses it
  without touching the run (`invalid_transition`: the case's outcome, `state_conflict`), and
  an operator then cancels the run before it does anything, so it counts as the case file's
  runner counts it: a controlled failure, no effect.

Outcomes and counters come from `verdicts`.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import nats
from rich.table import Column, Table
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app import terminal
from interlock.app.composition import default_stack
from interlock.app.supervisor import Supervisor
from interlock.config.settings import Settings
from interlock.contracts.urls import nats_servers
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.simulators import effect_rows
from interlock.tools.demo import casedrive as drive
from interlock.tools.demo.casefile import Case, Fixture
from interlock.tools.demo.timings import HELD, attached_cases, cases_not_served
from interlock.tools.demo.verdicts import COUNTERS, door_outcome, run_outcome, summary


def components() -> list[str]:
    """What the cases alone need (`--fixture`): the core services, the simulator and the
    request stages. A function, not a constant: naming the stages loads the plugins, which
    happens when a command runs, never when a module is imported."""
    return default_stack(drive.WORKFLOW_TYPE)


CASE_TIMEOUT = 60.0


class Settled(NamedTuple):
    outcome: str
    created: bool
    """This case's request created its run (its audit counts towards the counters)."""
    workflow_id: str | None
    """The run the projector decided this case against (None if dead-lettered)."""


@dataclass(frozen=True)
class CaseResult:
    id: str
    scenario: str
    expected: str
    outcome: str
    workflow_id: str | None

    @property
    def ok(self) -> bool:
        return self.outcome == self.expected

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "expected": self.expected,
            "outcome": self.outcome,
            "workflow_id": self.workflow_id,
        }


@dataclass(frozen=True)
class FixtureReport:
    cases: list[CaseResult]
    summary: dict[str, int]
    skipped: str | None = None
    """Why no case ran."""
    skipped_cases: tuple[str, ...] = ()
    """The cases left out on an attached `interlock up` (`attached_cases`)."""

    @property
    def ok(self) -> bool:
        """Every case as expected, and no effect in the ledger without its authority."""
        good = all(c.ok for c in self.cases) and self.summary.get("unauthorized_effects") == 0
        return self.skipped is None and good

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "cases": [c.as_json() for c in self.cases],
            "summary": self.summary,
        }
        if self.skipped_cases:
            found["skipped_cases"] = list(self.skipped_cases)
        return found | ({"skipped": self.skipped} if self.skipped else {})


@dataclass(frozen=True)
class _Context:
    bus: Clients
    engine: AsyncEngine
    listeners: drive.Listeners


async def play(
    s: Settings,
    fixture: Fixture,
    supervisor: Supervisor | None,
    nats_url: str,
    database_url: str,
) -> FixtureReport:
    """Run every case on the running components and report what the stack did (`nats_url`:
    the administrator's, who reads the dead letters; the cases go out as clients). Without
    a supervisor (attached to an `interlock up`), the cases it would hold a service for are
    left out (`attached_cases`)."""
    cases, left_out = fixture.cases, list[Case]()
    if supervisor is None:
        if why := await cases_not_served(s, nats_url):
            return FixtureReport([], {}, skipped=why)
        cases, left_out, why = attached_cases(fixture)
        if why:
            terminal.errors.print(why, soft_wrap=True, markup=False)
    run_id = uuid.uuid4().hex[:10]
    subs = [drive.submission(c, f"fixture-{run_id}", run_id) for c in cases]
    async with AsyncExitStack() as stack:
        nc = await nats.connect(nats_servers(nats_url), name="interlock-demo-cases")
        stack.push_async_callback(nc.drain)
        bus = await Clients.connect(s, nats_url, "interlock-demo-cases")
        stack.push_async_callback(bus.close)
        engine = queries.open_reader(database_url, pool_size=4)
        stack.push_async_callback(engine.dispose)
        listeners = drive.Listeners()
        await listeners.start(nc)
        stack.push_async_callback(listeners.stop)
        ctx = _Context(bus, engine, listeners)
        settled = await _run(ctx, supervisor, subs, run_id)
        report = await _report(ctx, subs, settled, database_url)
        return replace(report, skipped_cases=tuple(c.id for c in left_out))


async def _run(
    ctx: _Context, supervisor: Supervisor | None, subs: list[drive.Submission], run_id: str
) -> list[Settled]:
    if supervisor is None:  # attached: `play` left the held cases out
        await _publish_in_order(ctx, subs, run_id)
        return list(await asyncio.gather(*(_settle(ctx, sub) for sub in subs)))
    groups: dict[str, list[drive.Submission]] = {}
    for sub in subs:
        if sub.case.scenario in HELD:
            groups.setdefault(HELD[sub.case.scenario], []).append(sub)
    for name in groups:
        await supervisor.hold(name)
    try:
        await _publish_in_order(ctx, subs, run_id)
    except BaseException:
        await asyncio.gather(*(supervisor.release(name) for name in groups))
        raise
    outcomes = [asyncio.create_task(_settle(ctx, sub)) for sub in subs]
    await asyncio.gather(*(_held(ctx, supervisor, name, g) for name, g in groups.items()))
    return list(await asyncio.gather(*outcomes))


async def _held(
    ctx: _Context, supervisor: Supervisor, name: str, group: list[drive.Submission]
) -> None:
    """Let the cases that need `name` down do their part, then let it back up."""
    try:
        with suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(_at_checkpoint(ctx, sub) for sub in group)), CASE_TIMEOUT
            )
    finally:
        await supervisor.release(name)


async def _publish_in_order(ctx: _Context, subs: list[drive.Submission], run_id: str) -> None:
    """Publish every case in file order; one that reuses an event id only once the projector
    has decided the previous use, so replays and conflicts meet the run they refer to."""
    previous: dict[str, drive.Submission] = {}
    for sub in subs:
        earlier = previous.get(sub.case.event_id or "")
        if earlier is not None:
            with suppress(TimeoutError):
                await asyncio.wait_for(_door(ctx, earlier), CASE_TIMEOUT)
        await drive.publish(ctx.bus, sub, run_id)
        if sub.case.event_id:
            previous[sub.case.event_id] = sub


async def _at_checkpoint(ctx: _Context, sub: drive.Submission) -> None:
    """What a timed case does while its stage service is held down."""
    if await _door(ctx, sub) is not None:
        return
    if sub.case.scenario == "resume":
        await drive.resume(ctx.bus, ctx.engine, sub)
    else:
        await drive.jump_to_execution(ctx.bus, ctx.engine, sub)


async def _door(ctx: _Context, sub: drive.Submission) -> Settled | None:
    """The door's verdict on this publication, or None if it created a run."""

    async def probe() -> tuple[str | None, dict[str, Any] | None] | None:
        reason = ctx.listeners.dead_letter_reason(sub.body)
        row = await drive.door_row(ctx.engine, sub)
        return None if reason is None and row is None else (reason, row)

    reason, row = await drive.poll(probe)
    outcome = door_outcome(reason, row)
    if outcome is None:
        return None
    return Settled(outcome, False, sub.workflow_id if row is not None else None)


async def _settle(ctx: _Context, sub: drive.Submission) -> Settled:
    """The case's outcome, within `CASE_TIMEOUT`."""
    try:
        return await asyncio.wait_for(_outcome(ctx, sub), CASE_TIMEOUT)
    except TimeoutError:
        row = await drive.door_row(ctx.engine, sub)
        door = door_outcome(ctx.listeners.dead_letter_reason(sub.body), row)
        if door is not None or sub.workflow_id is None:
            return Settled(f"timed_out:{door}", False, sub.workflow_id if row else None)
        view = await queries.workflow_view(ctx.engine, sub.workflow_id)
        return Settled(f"timed_out:{run_outcome(view)}", True, sub.workflow_id)


async def _outcome(ctx: _Context, sub: drive.Submission) -> Settled:
    door = await _door(ctx, sub)
    if door is not None or sub.workflow_id is None:
        return door or Settled("not_created", False, None)
    helper = None
    if sub.case.approval is not None:
        helper = asyncio.create_task(drive.answer_approval(ctx.bus, ctx.listeners, sub))
    try:
        view = await drive.state_in(ctx.engine, sub.workflow_id, drive.TERMINAL)
    finally:
        if helper is not None:
            helper.cancel()
            with suppress(asyncio.CancelledError):
                await helper
    return Settled(run_outcome(view), True, sub.workflow_id)


async def _report(
    ctx: _Context, subs: list[drive.Submission], settled: list[Settled], database_url: str
) -> FixtureReport:
    runs = sorted({s.workflow_id for s in settled if s.created and s.workflow_id})
    views = [v for w in runs if (v := await queries.workflow_view(ctx.engine, w)) is not None]
    effects = await effect_rows(database_url, runs)
    results = [
        CaseResult(sub.case.id, sub.case.scenario, sub.case.expected, s.outcome, s.workflow_id)
        for sub, s in zip(subs, settled, strict=True)
    ]
    return FixtureReport(results, summary([r.outcome for r in results], views, effects))


def show(report: FixtureReport) -> None:
    """The cases as a table, then the counters one per line (as the case runner prints them)."""
    out = terminal.console
    out.print()  # apart from the scenarios' table above
    if report.skipped:
        out.print(f"[yellow]request cases skipped:[/] {report.skipped}")
        return
    # Ids are pasted into `show`: their column never wraps; the others fold.
    longest = max((len(c.workflow_id or "-") for c in report.cases), default=1)
    table = Table(
        *(Column(h, overflow="fold") for h in ("case", "scenario", "expected", "outcome")),
        Column("result", overflow="fold"),
        Column("workflow", no_wrap=True, min_width=longest),
        box=None,
    )
    for c in report.cases:
        verdict = "[green]ok[/]" if c.ok else "[red]MISMATCH[/]"
        table.add_row(c.id, c.scenario, c.expected, c.outcome, verdict, c.workflow_id or "-")
    out.print(table)
    for name in COUNTERS:
        out.print(f"{name}={report.summary[name]}")
