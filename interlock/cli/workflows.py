"""`interlock workflows`: the installed workflow types, as the runtime loads them."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from interlock.app import terminal
from interlock.app.options import JsonOpt
from interlock.config.plugins import Installed, installed


def workflows(json_output: JsonOpt = False) -> None:
    """The installed workflow types: versions, stages, ports and the distribution of each.
    Exit 2 when a plugin was refused (each named in one line on stderr, and under `refused`
    in `--json`): the others are listed, but the installation is not what was meant."""
    loaded = installed()
    found = describe(loaded)
    if json_output:
        terminal.print_json(found)
    else:
        _table(found)
    if loaded.broken:
        raise typer.Exit(2)


def _table(found: dict[str, Any]) -> None:
    table = Table("type", "versions", "stages", "ports", "distribution", box=None)
    for w in found["workflows"]:
        table.add_row(
            w["type"],
            ", ".join(f"v{v}" for v in w["versions"]),
            ", ".join(s["name"] for s in w["stages"]),
            ", ".join(p["name"] for p in w["ports"]) or "-",
            f"{w['distribution']} ({w['entry_point']})",
        )
    terminal.console.print(table)


def describe(found: Installed) -> dict[str, Any]:
    """What `--json` prints: `{"workflows": [...]}`, one entry per type, sorted by type."""
    entries = []
    for workflow_type, loaded in found.plugins.items():
        plugin = loaded.plugin
        latest = found.registry.latest(workflow_type)
        placed = [*latest.stages.items()]
        placed += [(p.state, b.stage) for p in latest.parallel for b in p.branches]
        stages = [
            {
                "name": stage.name,
                "state": state,
                "inputs": list(stage.inputs),
                "emits": sorted(latest.emitted_by(stage.name)),
            }
            for state, stage in placed
        ]
        entries.append(
            {
                "type": workflow_type,
                "description": plugin.description,
                "versions": found.registry.versions(workflow_type),
                "latest": latest.version,
                "stages": stages,
                "ports": [{"name": p.name, "protocol": p.protocol_name} for p in plugin.ports],
                "distribution": loaded.distribution,
                "entry_point": loaded.entry_point,
            }
        )
    refused = [{"plugin": e.plugin, "problem": f"{e.row}: {e.problem}"} for e in found.broken]
    return {"workflows": entries, "refused": refused}
