"""The hostile round's timing: each good workflow under attack against the quiet stack's
median, within a bound; a round whose slowest good workflow passes the bound is not ok. The
round times the stack `up` runs."""

from __future__ import annotations

import pytest

from interlock.app.composition import default_stack
from interlock.config.components import CONSOLE, GATEWAY
from interlock.config.settings import Settings
from interlock.tools.hostile import components, timing
from interlock.tools.hostile.round import Report


def _report(t: timing.Timing | None) -> Report:
    return Report(sent={}, fates={}, good=2, good_as_without_noise=2, good_failures=[],
                  seconds=1.0, timing=t)  # fmt: skip


def test_ratios_are_against_the_quiet_median() -> None:
    t = timing.Timing(quiet_s=[1.0, 2.0, 9.0], attacked_s=[2.0, 3.0, 4.0], bound=2.0)

    assert t.baseline == 2.0
    assert t.ratios == [1.0, 1.5, 2.0]
    assert t.within_bound
    shown = t.as_json()
    assert (shown["ratio_median"], shown["ratio_max"], shown["quiet_median_s"]) == (1.5, 2.0, 2.0)


def test_one_good_workflow_past_the_bound_fails_the_round() -> None:
    t = timing.Timing(quiet_s=[1.0], attacked_s=[1.0, 1.1, 2.01], bound=2.0)

    assert not t.within_bound
    assert _report(t).ok is False
    assert _report(t).as_json()["timing"]["within_bound"] is False
    assert _report(None).ok is True  # an untimed round is judged on its fates alone


@pytest.mark.parametrize(("quiet", "attacked"), [([], [1.0]), ([1.0], [])])
def test_nothing_to_compare_is_no_timing(quiet: list[float], attacked: list[float]) -> None:
    assert timing.ready((quiet, []), (attacked, []), 2.0) is None


def test_the_slowest_workflow_shows_where_its_time_went() -> None:
    t = timing.Timing(
        quiet_s=[1.0, 1.0, 1.0],
        attacked_s=[1.0, 3.0],
        quiet_split=[timing.Split(0.4, 0.6), timing.Split(0.5, 0.5), timing.Split(0.3, 0.7)],
        attacked_split=[timing.Split(0.4, 0.6), timing.Split(2.5, 0.5)],
    )

    shown = t.as_json()
    assert shown["slowest"] == {"deciding_s": 2.5, "dispatching_s": 0.5}
    assert shown["quiet"] == {"deciding_s": 0.4, "dispatching_s": 0.6}


def test_the_slowest_workflow_shows_each_step_it_took() -> None:
    steps = (("START", 0.0, 0.05), ("APPROVED", 0.2, 1.25))
    t = timing.Timing(
        quiet_s=[1.0],
        attacked_s=[1.5],
        quiet_split=[timing.Split(0.1, 0.2)],
        attacked_split=[timing.Split(1.3, 0.2, steps)],
    )

    assert t.as_json()["slowest"] == {
        "deciding_s": 1.3,
        "dispatching_s": 0.2,
        "steps": [["START", 0.0, 0.05], ["APPROVED", 0.2, 1.25]],
    }


@pytest.mark.parametrize(("hosted", "partitions"), [("on", 1), ("off", 2), ("on", 2)])
def test_a_round_runs_the_stack_as_up_runs_it(hosted: str, partitions: int) -> None:
    s = Settings(stage_host=hosted, projector_host=hosted, projector_partitions=partitions)

    on = hosted == "on"
    up = default_stack("support", partitions=partitions, stage_host=on, projector_host=on)
    assert components(s) == [*up, GATEWAY, CONSOLE]
    assert ("stages" in components(s)) is on
    projector_processes = 1 if on else partitions
    assert sum(name.startswith("projector") for name in components(s)) == projector_processes
