"""The partition series' arithmetic: which counts it takes, and its medians and ratios."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.tools.bench_series import counts_of, summary
from interlock.tools.errors import BenchRefused


def test_counts_are_distinct_partition_counts() -> None:
    assert counts_of("1,2,4") == [1, 2, 4]
    for bad in ("", "0,2", "1,1", "two", "1,65"):
        with pytest.raises(BenchRefused, match="--partitions"):
            counts_of(bad)


def _run(round_no: int, n: int, cpu: float, rate: float, failures: int = 0) -> dict[str, Any]:
    report = {
        "workflows_per_s": rate,
        "p50_ms": 100.0 * n,
        "cpu_ms_per_workflow": cpu,
        "cpu_ms_per_workflow_all": cpu * 2,
        "failures": failures,
    }
    return {"round": round_no, "partitions": n, "report": report}


def test_the_summary_gives_medians_and_the_median_ratio_within_a_round() -> None:
    runs = [
        _run(1, 1, 40.0, 30.0),
        _run(1, 2, 44.0, 28.0),
        _run(2, 1, 30.0, 32.0),
        _run(2, 2, 39.0, 27.0, failures=1),
        _run(3, 1, 50.0, 20.0),
        _run(3, 2, 45.0, 29.0),
    ]
    first, second = summary([1, 2], runs)
    assert first == {
        "partitions": 1,
        "runs": 3,
        "workflows_per_s": 30.0,
        "p50_ms": 100.0,
        "cpu_ms_per_workflow": 40.0,
        "cpu_ms_per_workflow_all": 80.0,
        "cpu_vs_first": 1.0,
        "failures": 0,
    }
    assert second["cpu_ms_per_workflow"] == 44.0
    # per round 1.1, 1.3, 0.9: the median ratio, not the ratio of the medians (44/40)
    assert second["cpu_vs_first"] == 1.1
    assert second["failures"] == 1
    assert second["workflows_per_s"] == 28.0
