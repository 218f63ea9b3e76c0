"""The shipped alert rules (deploy/alerts.yml): valid for Prometheus, each proven by a
`promtool test rules` case that fires it and keeps it quiet on healthy series, each explained
in the README, and loaded by docker-compose's Prometheus, which scrapes the collector."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from interlock.relay.outcomes import INSTRUMENTS
from tests.support.compose_files import ROOT, collector, mounts, services

DEPLOY = ROOT / "deploy"
RULES = DEPLOY / "alerts.yml"
TESTS = DEPLOY / "alerts.test.yml"


def _yaml(name: str) -> Any:
    return yaml.safe_load((DEPLOY / name).read_text(encoding="utf-8"))


def _alerts() -> list[str]:
    return [r["alert"] for g in _yaml("alerts.yml")["groups"] for r in g["rules"]]


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("promtool is missing (Debian package prometheus; .ci/run installs it)")
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_promtool(), *args], cwd=DEPLOY, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_shipped_rules_are_valid_prometheus_rules() -> None:
    checked = _run("check", "rules", RULES.name)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(_alerts())} rules found" in checked.stdout


def test_every_shipped_rule_passes_its_promtool_tests() -> None:
    tested = _run("test", "rules", TESTS.name)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_alert_has_a_promtool_case_and_a_readme_entry() -> None:
    cases = {
        test["alertname"]
        for case in _yaml("alerts.test.yml")["tests"]
        for test in case.get("alert_rule_test", [])
        if test["exp_alerts"]
    }
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(_alerts()) <= cases
    assert [a for a in _alerts() if f"`{a}`" not in readme] == []


def test_the_required_situations_each_have_an_alert() -> None:
    assert set(_alerts()) == {
        "InterlockApprovalWaitOverSLA",
        "InterlockRetryStorm",
        "InterlockWorkflowsStuck",
        "InterlockOutboxLag",
        "InterlockDeadLetterGrowth",
        "InterlockCompletionRateLow",
        "InterlockDuplicateEffect",
        "InterlockBudgetExhausted",
    }


def test_compose_prometheus_loads_the_shipped_rules_and_scrapes_the_collector() -> None:
    prometheus = services()["prometheus"]
    mounted = dict(mounts(prometheus))
    config = _yaml("prometheus.yml")
    assert mounted["./deploy/alerts.yml"] in config["rule_files"]
    assert mounted["./deploy/prometheus.yml"] == "/etc/prometheus/prometheus.yml"
    exporter_port = collector()["exporters"]["prometheus"]["endpoint"].rsplit(":", 1)[1]
    targets = [
        t for job in config["scrape_configs"] for s in job["static_configs"] for t in s["targets"]
    ]
    assert targets == [f"otel-collector:{exporter_port}"]


SUFFIX = {"s": "_seconds", "1": ""}
OTHER_SERIES = {
    # the relay's gauges and the dead-letter counter (README: Observability)
    "interlock_human_waits_overdue",
    "interlock_workflows_stuck",
    "interlock_outbox_oldest_age_seconds",
    "interlock_dead_letters_total",
}


def test_every_series_a_rule_reads_is_one_interlock_exports() -> None:
    """As the OpenTelemetry Prometheus exporter names them: dots to underscores, the unit as
    a suffix (`s`: `_seconds`; annotations such as `{workflow}` dropped)."""
    exported = {
        f"interlock_slo_{name}{SUFFIX.get(unit, '')}" for name, (unit, _) in INSTRUMENTS.items()
    } | OTHER_SERIES
    expressions = [r["expr"] for g in _yaml("alerts.yml")["groups"] for r in g["rules"]]
    read = {name for e in expressions for name in re.findall(r"\binterlock_[a-z_]+", e)}
    assert len(read) >= len(expressions)
    assert read - exported == set()
