"""The runnable components of Interlock: each runs until its stop event is set.

`interlock up` runs each in its own process (see `supervisor`), so one can crash, be killed or
be restarted without the others (on a small machine the stage services share one, the stage
host); `interlock service NAME` runs one in the foreground. Which
names a stack is made of is `composition`'s business; what runs under each is its row's
runner (`run_projector`, `run_relay`, `run_edges`, `stage_services`), imported only by the
process that runs it: a component loads its own libraries, not every component's.
"""

from __future__ import annotations

import importlib
from typing import cast

from interlock.app.runtime import Component
from interlock.config import components as table
from interlock.config.plugins import installed


def components() -> dict[str, Component]:
    """Every component by name, each row of the table of components with its runner: the
    core services, the extras, the stage services and the stage host (the partitions of a
    partitioned projector: `component`)."""
    return {row.name: _runner(row, row.name) for row in table.rows()}


def component(name: str) -> Component:
    """What runs under `name`: its row's runner (a projector partition's is the projector's,
    given the partition's name); KeyError for a name no row has or a stage not installed."""
    row = table.row_of(name)
    if row.stage is not None and row.stage not in installed().registry.stages():
        raise KeyError(name)
    return _runner(row, name)


def _runner(row: table.Component, name: str) -> Component:
    """The runner `row` names ("module:attr"), imported only now; a per-name row's is the
    component its function makes of `name`."""
    module, _, attr = row.runner.partition(":")
    found = getattr(importlib.import_module(module), attr)
    return cast(Component, found(name) if row.per_name else found)
