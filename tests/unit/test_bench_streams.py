"""The bench's broker figures: each stream's writes over the measured window, per workflow,
and the trace sampling the stack runs with, read the way OpenTelemetry's SDK reads it."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import sampling as sdk

from interlock.tools.bench_servers import per_workflow, sampling, stream_writes

pytestmark = pytest.mark.unit


def test_a_streams_writes_are_what_it_stored_and_removed_within_the_window() -> None:
    before = {"WF_IN": (100, 3), "WF_JOBS": (50, 0), "WF_DLQ": (7, 7)}
    after = {"WF_IN": (190, 5), "WF_JOBS": (120, 10), "WF_DLQ": (7, 7), "WF_NEW": (4, 4)}

    writes = stream_writes(before, after)

    assert writes["WF_IN"] == {"stored": 90, "removed": 88}  # 90 in, two more held than before
    assert writes["WF_JOBS"] == {"stored": 70, "removed": 60}
    assert writes["WF_DLQ"] == {"stored": 0, "removed": 0}
    assert writes["WF_NEW"] == {"stored": 4, "removed": 0}  # created during the window


def test_per_workflow_divides_by_the_workflows_measured_and_leaves_idle_streams_out() -> None:
    writes = {"WF_IN": {"stored": 90, "removed": 88}, "WF_DLQ": {"stored": 0, "removed": 0}}

    shown = per_workflow(writes, 10)

    assert shown["stored"] == 9.0
    assert shown["removed"] == 8.8
    assert shown["by_stream"] == {"WF_IN": {"stored": 9.0, "removed": 8.8}}
    assert per_workflow(writes, 0)["stored"] is None


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, ("parentbased_always_on", 1.0)),
        ({"OTEL_TRACES_SAMPLER": "always_off"}, ("always_off", 0.0)),
        (
            {"OTEL_TRACES_SAMPLER": "TraceIdRatio", "OTEL_TRACES_SAMPLER_ARG": "0.1"},
            ("traceidratio", 0.1),
        ),
        ({"OTEL_TRACES_SAMPLER": "parentbased_traceidratio"}, ("parentbased_traceidratio", 1.0)),
        (
            {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
            ("traceidratio", 1.0),
        ),
        (
            {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "x"},
            ("traceidratio", 1.0),
        ),
        ({"OTEL_TRACES_SAMPLER": "my_custom"}, ("my_custom", None)),
    ],
)
def test_sampling_is_read_as_the_sdk_reads_it(
    environ: dict[str, str], expected: tuple[str, float | None]
) -> None:
    shown = sampling(environ)
    assert (shown["sampler"], shown["ratio"]) == expected


@pytest.mark.parametrize(
    "environ",
    [
        {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"},
        {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "7"},
        {"OTEL_TRACES_SAMPLER": "traceidratio"},
    ],
)
def test_the_ratio_shown_is_the_one_the_sdk_samples_at(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    chosen = sdk._get_from_env_or_default()
    root = getattr(chosen, "_root", chosen)
    assert isinstance(root, sdk.TraceIdRatioBased)
    assert sampling(environ)["ratio"] == root.rate
