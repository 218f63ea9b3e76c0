"""How long the good workflows take under attack, against the same stack quiet.

Before the hostile round, a few good workflows run one at a time on the quiet stack: their
median, from the request's publication to the commit of the workflow's last decision, is the
baseline. Each good workflow of the round is timed the same way, and its ratio to the baseline
must stay within the bound (twice, by default). The baseline is the strict one: under attack the
good workflows also overlap each other, quiet they run alone."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.ops import queries

BOUND = 2.0
"""A good workflow under attack may take at most this many times the quiet median."""


@dataclass(frozen=True)
class Split:
    """Where one workflow's time went: `deciding`, the seconds from each event's creation to
    the commit of its decision (the inbound stream, the projector's queue and the decision);
    `dispatching`, from each commit to the next event's creation (the outbox, the jobs, the
    stage's work or the approver's answer)."""

    deciding: float
    dispatching: float
    steps: tuple[tuple[str, float, float], ...] = ()
    """Each accepted event's type, the seconds before its creation (since the last commit)
    and its own deciding seconds, in commit order, when known."""

    def as_json(self) -> dict[str, object]:
        shown: dict[str, object] = {
            "deciding_s": round(self.deciding, 3),
            "dispatching_s": round(self.dispatching, 3),
        }
        if self.steps:
            shown["steps"] = [[t, round(before, 3), round(d, 3)] for t, before, d in self.steps]
        return shown


@dataclass(frozen=True)
class Timing:
    quiet_s: list[float]
    """Each quiet workflow's seconds from publication to its last commit."""
    attacked_s: list[float]
    """Each good workflow's of the hostile round."""
    bound: float = BOUND
    quiet_split: list[Split] = field(default_factory=list)
    """Where each quiet workflow's time went (`Split`), when known."""
    attacked_split: list[Split] = field(default_factory=list)
    """The same of each good workflow of the round."""

    @property
    def baseline(self) -> float:
        return statistics.median(self.quiet_s)

    @property
    def ratios(self) -> list[float]:
        return [s / self.baseline for s in self.attacked_s]

    @property
    def within_bound(self) -> bool:
        return bool(self.attacked_s) and max(self.ratios) <= self.bound

    def as_json(self) -> dict[str, object]:
        ratios = sorted(self.ratios)
        return {
            "quiet_median_s": round(self.baseline, 3),
            "attacked_median_s": round(statistics.median(self.attacked_s), 3),
            "ratio_median": round(statistics.median(ratios), 2),
            "ratio_p95": round(_p95(ratios), 2),
            "ratio_max": round(ratios[-1], 2),
            "bound": self.bound,
            "within_bound": self.within_bound,
            **self._slowest(),
        }

    def _slowest(self) -> dict[str, object]:
        """The slowest good workflow's split against the quiet median's, when known."""
        if len(self.attacked_split) != len(self.attacked_s) or not self.quiet_split:
            return {}
        slowest = max(range(len(self.attacked_s)), key=self.attacked_s.__getitem__)
        quiet = Split(
            statistics.median(q.deciding for q in self.quiet_split),
            statistics.median(q.dispatching for q in self.quiet_split),
        )
        return {"slowest": self.attacked_split[slowest].as_json(), "quiet": quiet.as_json()}


def _p95(ordered: list[float]) -> float:
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=20, method="inclusive")[-1]


async def durations(
    engine: AsyncEngine, published: dict[str, datetime]
) -> tuple[list[float], list[Split]]:
    """Seconds from each workflow's publication (`published`, by workflow id) to the commit of
    its last accepted decision, and where they went, in the order of `published`."""
    last: dict[str, datetime] = {}
    steps: dict[str, list[tuple[str, float, float]]] = {}
    for workflow_id, occurred, recorded, event_type in await queries.accepted_timestamps(
        engine, list(published)
    ):
        before = last.get(workflow_id, published[workflow_id])
        step = (event_type, _seconds(before, occurred), _seconds(occurred, recorded))
        steps.setdefault(workflow_id, []).append(step)
        last[workflow_id] = recorded  # commit order: the last one stays
    timed = [w for w in published if w in last]
    return (
        [(last[w] - published[w]).total_seconds() for w in timed],
        [_split(steps[w]) for w in timed],
    )


def _split(steps: list[tuple[str, float, float]]) -> Split:
    return Split(sum(s[2] for s in steps), sum(s[1] for s in steps), tuple(steps))


def _seconds(start: datetime, end: datetime) -> float:
    """`end - start`, never negative (a producer's clock a little ahead of the database's)."""
    return max(0.0, (end - start).total_seconds())


def ready(
    quiet: tuple[list[float], list[Split]],
    attacked: tuple[list[float], list[Split]],
    bound: float,
) -> Timing | None:
    """The timing of a round, or None when either side has nothing to compare."""
    (quiet_s, quiet_split), (attacked_s, attacked_split) = quiet, attacked
    if not quiet_s or not attacked_s:
        return None
    return Timing(quiet_s, attacked_s, bound, quiet_split, attacked_split)
