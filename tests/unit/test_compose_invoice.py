"""The invoice example in the docker-compose deployment: its finance system and notifier
simulators keep one SQLite ledger, and the stages reaching it are separate containers, so each
of them must name the same ledger file (the plugin's `ledger` setting, through
INTERLOCK_ADAPTERS) on a named volume it mounts."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

import pytest
from interlock_invoice import PLUGIN

from interlock.app.bindings import check_adapters
from interlock.config.plugins import installed
from tests.support.compose_files import compose, environment, mounts, services

pytestmark = pytest.mark.unit
LEDGER_PORTS = {"finance", "notifier"}  # their default adapters are the ledger's simulators
LEDGER_STAGES = sorted(
    f"invoice-{s.name}" for s in PLUGIN.stages if LEDGER_PORTS & {p.name for p in s.ports}
)


def ledgers(service: str) -> dict[str, PurePosixPath]:
    """The ledger file each ledger port of `service` is configured with."""
    adapters = json.loads(environment(services()[service])["INTERLOCK_ADAPTERS"])
    check_adapters(adapters, installed())  # what `interlock service` checks at start
    return {
        port: PurePosixPath(config["ledger"])
        for port, config in adapters["invoice"].items()
        if port in LEDGER_PORTS
    }


def test_the_ledger_stages_are_the_ones_deployed() -> None:
    assert LEDGER_STAGES == [
        "invoice-notify",
        "invoice-post",
        "invoice-reverse",
        "invoice-validate",
    ]
    assert set(LEDGER_STAGES) <= set(services())


@pytest.mark.parametrize("service", LEDGER_STAGES)
def test_a_ledger_stage_keeps_the_ledger_on_a_named_volume(service: str) -> None:
    declared = set(compose().get("volumes") or {})
    found = ledgers(service)
    assert set(found) == LEDGER_PORTS
    on_volumes = [
        PurePosixPath(target)
        for source, target in mounts(services()[service])
        if source in declared
    ]
    for port, path in found.items():
        assert any(t in path.parents for t in on_volumes), (
            f"{service}: {port} ledger not on a volume"
        )


def test_every_ledger_stage_shares_one_ledger_file_and_volume() -> None:
    files = {path for service in LEDGER_STAGES for path in ledgers(service).values()}
    assert len(files) == 1, f"the stages would keep separate ledgers: {sorted(map(str, files))}"
    (ledger,) = files
    volumes = {
        source
        for service in LEDGER_STAGES
        for source, target in mounts(services()[service])
        if PurePosixPath(target) in ledger.parents
    }
    assert len(volumes) == 1, f"the ledger's directory is not one shared volume: {volumes}"
