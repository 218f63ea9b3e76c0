"""Debian's Prometheus against a running `interlock up`: it scrapes the `metrics_url` that
`endpoints.json` names, evaluates the shipped rules (deploy/alerts.yml, their `for:` shortened
to a second) and fires the approval-wait alert for a support request left waiting past its
short deadline — while the outcome figures of the same scrape count the request started."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from interlock import Client
from tests.support.cli import free_port, interlock_up
from tests.support.payloads import REQUEST
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(240)
RULES = Path(__file__).resolve().parents[2] / "deploy" / "alerts.yml"
ALERT = "InterlockApprovalWaitOverSLA"
STAGES = ("projector", "relay", "timer", "sim", "stages")


def _quick_rules(path: Path) -> Path:
    """The shipped rules with each `for:` shortened to one second (the expressions as
    shipped)."""
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "1s"
    path.write_text(yaml.safe_dump(rules), encoding="utf-8")
    return path


@contextmanager
def _prometheus(workdir: Path, target: str) -> Iterator[str]:
    """Prometheus on a free loopback port, scraping `target` (host:port) every second."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus is not installed (apt-get install prometheus; .ci/run does)")
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(_quick_rules(workdir / "alerts.yml"))],
        "scrape_configs": [{"job_name": "interlock", "static_configs": [{"targets": [target]}]}],
    }
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    address = f"127.0.0.1:{free_port()}"
    server = subprocess.Popen(
        [
            binary,
            f"--config.file={workdir / 'prometheus.yml'}",
            f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address={address}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "prometheus.log").open("w"),
    )
    try:
        yield f"http://{address}"
    finally:
        server.terminate()
        server.wait(30)


async def _ready(http: httpx.AsyncClient, base: str) -> bool:
    """Whether Prometheus serves its API: until its storage is open, every endpoint answers
    503 "Service Unavailable" (and before that, nothing listens)."""
    try:
        answer = await http.get(f"{base}/-/ready")
    except httpx.TransportError:
        return False
    return answer.status_code == 200


async def _firing(http: httpx.AsyncClient, base: str) -> list[dict[str, Any]] | None:
    answer = (await http.get(f"{base}/api/v1/alerts")).raise_for_status()
    alerts = answer.json()["data"]["alerts"]
    found = [a for a in alerts if a["labels"]["alertname"] == ALERT and a["state"] == "firing"]
    return found or None


async def _scraped(http: httpx.AsyncClient, base: str, query: str) -> float | None:
    answer = (await http.get(f"{base}/api/v1/query", params={"query": query})).raise_for_status()
    result = answer.json()["data"]["result"]
    return float(result[0]["value"][1]) if result else None


async def test_prometheus_fires_the_approval_wait_alert_for_a_request_past_its_deadline(
    tmp_path: Path,
) -> None:
    home, metrics_port = tmp_path / "home", free_port()
    short_wait = json.dumps({"support": {"approval_reminder_after_seconds": 1}})
    with interlock_up(
        home,
        *STAGES,
        INTERLOCK_METRICS_PORT=str(metrics_port),
        INTERLOCK_METRICS_INTERVAL="0.5",
        INTERLOCK_PARAMETERS=short_wait,
    ) as printed:
        metrics_url = json.loads((home / "endpoints.json").read_text())["metrics_url"]
        assert metrics_url == f"http://127.0.0.1:{metrics_port}/metrics"
        assert f"Prometheus metrics {metrics_url}" in printed
        client = await Client.connect(home=home)
        try:
            await client.start("support", REQUEST, tenant_id="acme")
        finally:
            await client.close()
        with _prometheus(tmp_path, f"127.0.0.1:{metrics_port}") as prometheus:
            async with httpx.AsyncClient(timeout=10) as http:
                await eventually(lambda: _ready(http, prometheus), within=60, every=0.2)
                firing = await eventually(
                    lambda: _firing(http, prometheus), within=180, every=1, what=ALERT
                )
                started = await _scraped(
                    http, prometheus, 'interlock_slo_started{workflow_type="support"}'
                )

    assert [a["labels"]["state"] for a in firing] == ["AWAITING_APPROVAL"]
    assert firing[0]["labels"]["workflow_type"] == "support"
    assert firing[0]["labels"]["severity"] == "warning"
    assert started == 1
