"""How long the good workflows take under attack, against the same stack quiet.

Before the hostile round, a few good workflows run one at a time on the quiet stack: their
median, from the request's publication to the commit of the workflow's last decision, is the
baseline. Each good workflow of the round is timed the same way, and its ratio to the baseline
must stay within the bound (twice, by default). The baseline is the strict one: under attack the
good workflows also overlap each other, quiet they run alone."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.ops import queries

BOUND = 2.0
"""A good workflow under attack may take at most this many times the quiet median."""


@dataclass(frozen=True)
class Timing:
    quiet_s: list[float]
    """Each quiet workflow's seconds from publication to its last commit."""
    attacked_s: list[float]
    """Each good workflow's of the hostile round."""
    bound: float = BOUND

    @property
    def baseline(self) -> float:
        return statistics.median(self.quiet_s)

    @property
    def ratios(self) -> list[float]:
        return [s / self.baseline for s in self.attacked_s]

    @property
    def within_bound(self) -> bool:
        return bool(self.attacked_s) and max(self.ratios) <= self.bound

    def as_json(self) -> dict[str, float | bool]:
        ratios = sorted(self.ratios)
        return {
            "quiet_median_s": round(self.baseline, 3),
            "attacked_median_s": round(statistics.median(self.attacked_s), 3),
            "ratio_median": round(statistics.median(ratios), 2),
            "ratio_p95": round(_p95(ratios), 2),
            "ratio_max": round(ratios[-1], 2),
            "bound": self.bound,
            "within_bound": self.within_bound,
        }


def _p95(ordered: list[float]) -> float:
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=20, method="inclusive")[-1]


async def durations(engine: AsyncEngine, published: dict[str, datetime]) -> list[float]:
    """Seconds from each workflow's publication (`published`, by workflow id) to the commit of
    its last accepted decision, in the order of `published`."""
    last: dict[str, datetime] = {}
    for workflow_id, _, recorded_at in await queries.accepted_timestamps(engine, list(published)):
        last[workflow_id] = recorded_at  # commit order: the last one stays
    return [(last[w] - at).total_seconds() for w, at in published.items() if w in last]


def ready(quiet: Iterable[float], attacked: Iterable[float], bound: float) -> Timing | None:
    """The timing of a round, or None when either side has nothing to compare."""
    quiet_s, attacked_s = list(quiet), list(attacked)
    if not quiet_s or not attacked_s:
        return None
    return Timing(quiet_s, attacked_s, bound)
