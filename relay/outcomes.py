"""The outcome SLOs a team runs a process by, per workflow type and tenant, counted from the
decisions the projector committed (`relay.outcome_sql`) over a trailing window.

`Outcomes.run` samples every `interval` seconds on the event loop (a gauge callback runs on
the exporter's thread and must not query the database); the `interlock.slo.*` gauges report
the last sample. Figures come from the store, so they are exact whatever process decided, and
a restart of the relay loses nothing. As with the other gauges, a failed sample keeps the
previous values and is logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

import asyncpg

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.effectcheck import effects_of
from interlock.contracts.effects import COMPENSATE_EVENT, CONFIRM_EVENT, RERUN_EVENT
from interlock.contracts.model_calls import BUDGET_EXHAUSTED
from interlock.contracts.progress import human_states
from interlock.contracts.registry import Registry
from interlock.messaging.waiting import wait_any
from interlock.otel import metrics
from interlock.relay import outcome_sql as sql
from interlock.relay.store import UNAVAILABLE, close_quietly

log = logging.getLogger(__name__)

Labels = dict[str, str]
Points = list[tuple[float, Labels]]
RECONCILIATIONS = {
    CONFIRM_EVENT: "confirmed",
    RERUN_EVENT: "rerun",
    COMPENSATE_EVENT: "compensated",
}


def _completed(definition: WorkflowDefinition) -> set[str]:
    """Terminal states that mean the work was done: a declared promise `done`, else a
    terminal named `completed` (any case)."""
    declared = {t.state for t in definition.terminals if t.effects == "done"}
    return declared or {s for s in definition.terminal_states if s.lower() == "completed"}


@dataclass(frozen=True, slots=True)
class Facts:
    """What the queries need to know of the definitions, as `unnest` columns."""

    kinds: tuple[list[str], list[str], list[str]]
    signals: tuple[list[str], list[str]]
    reasons: list[str]
    commits: tuple[list[str], list[str], list[str]]

    @classmethod
    def of(cls, registry: Registry) -> Facts:
        kinds: set[tuple[str, str, str]] = set()
        signals: set[tuple[str, str]] = set()
        commits: set[tuple[str, str, str]] = set()
        reasons: set[str] = set()
        people = human_states(registry)
        for d in registry:
            t, done = d.workflow_type, _completed(d)
            kinds |= {(t, s, "completed" if s in done else "terminal") for s in d.terminal_states}
            kinds |= {(t, s, "human" if (t, s) in people else "wait") for s in d.waiting_states}
            kinds |= {(t, s, "human") for s in {w.state for w in d.human_waits}}
            kinds.add((t, d.start_event, "start"))
            if d.review_state:
                kinds.add((t, d.review_state, "review"))
            signals |= {(t, e.name) for e in d.events if e.source == "signal"}
            # The engine's own reading of each effect (declared, or the defaults for one a
            # definition leaves undeclared), so every effect it records is watched.
            commits |= {(t, e.state, ev) for e in effects_of(d) for ev in e.committed}
            reasons |= {r.reason for r in d.transitions if r.reason} | {BUDGET_EXHAUSTED}
        return cls(_unzip3(kinds), _unzip2(signals), sorted(reasons), _unzip3(commits))


def _unzip2(rows: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    ordered = sorted(rows)
    return [a for a, _ in ordered], [b for _, b in ordered]


def _unzip3(rows: Iterable[tuple[str, str, str]]) -> tuple[list[str], list[str], list[str]]:
    ordered = sorted(rows)
    return [a for a, _, _ in ordered], [b for _, b, _ in ordered], [c for _, _, c in ordered]


@dataclass(slots=True)
class Sample:
    """The last sample: each figure's points (value, labels), by instrument name."""

    points: dict[str, Points] = field(default_factory=dict)

    def add(self, name: str, value: float | None, **labels: str) -> None:
        if value is not None:
            self.points.setdefault(name, []).append((float(value), labels))


def _quantiles(sample: Sample, name: str, row: asyncpg.Record, **labels: str) -> None:
    for quantile, column in (("0.5", "p50"), ("0.95", "p95")):
        sample.add(name, row[column], **labels, quantile=quantile)


def _finished(sample: Sample, rows: list[asyncpg.Record]) -> None:
    totals: dict[tuple[str, str], tuple[int, int]] = {}
    for r in rows:
        key = {"workflow_type": r["workflow_type"], "tenant": r["tenant_id"]}
        sample.add("finished", r["n"], **key, outcome=r["outcome"])
        _quantiles(sample, "duration", r, **key, outcome=r["outcome"])
        n, clean = totals.get((key["workflow_type"], key["tenant"]), (0, 0))
        totals[(key["workflow_type"], key["tenant"])] = (n + r["n"], clean + r["clean"])
    for (workflow_type, tenant), (n, clean) in sorted(totals.items()):
        labels = {"workflow_type": workflow_type, "tenant": tenant}
        sample.add("completed_unrescued", clean, **labels)
        sample.add("completion_ratio", clean / n, **labels)


def _started(sample: Sample, rows: list[asyncpg.Record], reviews: list[asyncpg.Record]) -> None:
    entered: dict[tuple[str, str], int] = {}
    for r in reviews:
        key = (r["workflow_type"], r["tenant_id"])
        entered[key] = entered.get(key, 0) + r["n"]
        labels = {"workflow_type": key[0], "tenant": key[1], "reason": r["reason"]}
        sample.add("manual_reviews", r["n"], **labels)
    for r in rows:
        labels = {"workflow_type": r["workflow_type"], "tenant": r["tenant_id"]}
        sample.add("started", r["n"], **labels)
        _quantiles(sample, "first_progress", r, **labels)
        reviewed = entered.get((r["workflow_type"], r["tenant_id"]), 0)
        sample.add("manual_review_ratio", reviewed / r["n"], **labels)


def _simple(sample: Sample, name: str, rows: list[asyncpg.Record], **columns: str) -> None:
    for r in rows:
        labels = {label: str(r[column]) for label, column in columns.items()}
        sample.add(name, r["n"], workflow_type=r["workflow_type"], **labels)


async def sample_outcomes(connection: asyncpg.Connection, facts: Facts, window: float) -> Sample:
    """Every figure over the last `window` seconds, from one connection."""
    common = (window, *facts.kinds, *facts.signals)
    sample = Sample()
    _finished(sample, await connection.fetch(sql.FINISHED, *common))
    reviews = await connection.fetch(sql.REVIEWS, *common, facts.reasons)
    _started(sample, await connection.fetch(sql.STARTED, *common), reviews)
    for r in await connection.fetch(sql.WAITS, *common):
        labels = {"workflow_type": r["workflow_type"], "tenant": r["tenant_id"]}
        human = "true" if r["kind"] == "human" else "false"
        _quantiles(sample, "wait", r, **labels, state=r["state"], human=human)
    retries = await connection.fetch(sql.RETRIES, window)
    _simple(sample, "retries", retries, tenant="tenant_id", operation="operation",
            error_class="error_class")  # fmt: skip
    for r in await connection.fetch(sql.RECONCILED, window, list(RECONCILIATIONS)):
        outcome = RECONCILIATIONS[r["event_type"]]
        sample.add("reconciliations", r["n"], workflow_type=r["workflow_type"],
                   tenant=r["tenant_id"], outcome=outcome)  # fmt: skip
    duplicates = await connection.fetch(sql.DUPLICATES, window, *facts.commits, RERUN_EVENT)
    _simple(sample, "duplicate_effects", duplicates, tenant="tenant_id")
    _simple(sample, "refusals", await connection.fetch(sql.REFUSALS, window), tenant="tenant_id",
            reason="reason")  # fmt: skip
    for r in await connection.fetch(sql.CONFIDENCE, window):
        sample.add("model_confidence", r["n"], workflow_type=r["workflow_type"],
                   tenth=f"{max(int(r['bucket']), 0) / 10:.1f}")  # fmt: skip
    return sample


async def completion_trend(
    connection: asyncpg.Connection, facts: Facts, hours: int
) -> list[asyncpg.Record]:
    """Per (type, hour) of the last `hours`: `n` finished, `clean` completed without rescue."""
    return list(await connection.fetch(sql.TREND, hours * 3600.0, *facts.kinds, *facts.signals))


INSTRUMENTS: dict[str, tuple[str, str]] = {
    "window": ("s", "The trailing window every interlock.slo figure counts over"),
    "started": ("{workflow}", "Workflows started in the window"),
    "finished": ("{workflow}", "Workflows that reached a terminal outcome in the window"),
    "completed_unrescued": (
        "{workflow}",
        "Workflows completed in the window without manual rescue (review, retry, resolution)",
    ),
    "completion_ratio": ("1", "Completed without manual rescue / finished, in the window"),
    "first_progress": ("s", "Time from start to the first move, of workflows started"),
    "duration": ("s", "Time from start to the terminal outcome, by outcome"),
    "wait": ("s", "Time spent in a waiting state (human=true: on a person), waits ended"),
    "manual_reviews": ("{workflow}", "Entries into manual review in the window, by reason"),
    "manual_review_ratio": ("1", "Entries into manual review / workflows started"),
    "retries": ("{failure}", "Stage failures recorded, by operation (state) and error class"),
    "reconciliations": ("{effect}", "Unknown effects settled, by outcome"),
    "duplicate_effects": ("{effect}", "Effects committed twice without a rerun: must be 0"),
    "refusals": ("{event}", "Events refused, by reason (budget_exhausted: a model budget)"),
    "model_confidence": ("{workflow}", "Model confidences in workflow data, per tenth"),
}

_running: list[Outcomes] = []


def _reader(name: str) -> Callable[[], Points]:
    return lambda: [point for o in list(_running) for point in o.last.points.get(name, [])]


@cache
def _instruments() -> None:
    for name, (unit, description) in INSTRUMENTS.items():
        metrics.gauge(f"interlock.slo.{name}", unit, description, _reader(name))


class Outcomes:
    """Samples the outcome SLOs of `registry`'s types every `interval` seconds, each over the
    last `window` seconds."""

    def __init__(
        self, database_url: str, *, registry: Registry, window: float, interval: float = 15.0
    ) -> None:
        self._url = database_url
        self._facts = Facts.of(registry)
        self._window = window
        self._interval = interval
        self.last = Sample()

    async def sample(self) -> Sample:
        """Query the database once and keep the result as `last`."""
        # A pass never outlives a few intervals: a slow database delays figures, not the relay.
        connection = await asyncpg.connect(self._url, timeout=10, command_timeout=60)
        try:
            sample = await sample_outcomes(connection, self._facts, self._window)
        finally:
            await close_quietly(connection)
        sample.add("window", self._window)
        self.last = sample
        return sample

    async def run(self, stop: asyncio.Event) -> None:
        """Sample until `stop` is set; the gauges report this instance's values meanwhile."""
        _instruments()
        _running.append(self)
        try:
            while not stop.is_set():
                try:
                    await self.sample()
                except (*UNAVAILABLE, asyncpg.PostgresError) as exc:
                    log.warning("outcome sample failed: %s; again later", type(exc).__name__)
                await wait_any([stop], self._interval)
        finally:
            _running.remove(self)
