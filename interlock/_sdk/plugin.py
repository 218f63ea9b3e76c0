"""`Plugin`: what a distribution installs under the entry point group `interlock.workflows`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from interlock._sdk.guards import guard
from interlock._sdk.models import ModelTask
from interlock._sdk.ports import Port
from interlock._sdk.scenarios import Scenario
from interlock._sdk.stages import StageLike
from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.guards import GuardPredicate, PluginGuard
from interlock.contracts.registry import WorkflowKey

ENTRY_POINT_GROUP = "interlock.workflows"
__all__ = ["ENTRY_POINT_GROUP", "Plugin", "guard"]


@dataclass(frozen=True)
class Plugin:
    """One workflow type: every executable version of its definition, its stages and ports.

    Register it in the distribution's `pyproject.toml`:

    ```toml
    [project.entry-points."interlock.workflows"]
    hello = "hello_workflow:PLUGIN"
    ```
    Old versions stay listed for as long as workflows started on them may be in flight.
    """

    workflow_type: str
    definitions: tuple[WorkflowDefinition, ...]
    stages: tuple[StageLike, ...] = ()
    ports: tuple[Port[object], ...] = ()
    description: str = ""
    guards: tuple[PluginGuard, ...] = ()
    """The plugin's own pure guards (`@guard`), usable in its rows beside the built-in ones."""
    workflow_key: WorkflowKey | None = None
    """A pure function of the start request's payload giving its business key: requests of
    one tenant with the same key are the same workflow (a repeat is an `idempotent_replay`),
    whatever their event ids. None (or a None key): the event id decides."""
    model_tasks: tuple[ModelTask, ...] = ()
    """The tasks its stages ask a model: their prompts and deterministic rules."""
    scenarios: tuple[Scenario, ...] = ()
    """Named end-to-end cases `interlock demo` runs on the real stack (`Scenario`)."""
    scenario_parameters: Mapping[str, object] = field(default_factory=dict)
    """Parameter overrides the demo starts the stack with for this type, so its scenarios
    finish in seconds (short SLAs, fast retries); unless the installation sets its own."""

    def guard_predicates(self) -> dict[str, GuardPredicate]:
        return {g.name: g.predicate for g in self.guards}

    def stages_asking_a_model(self) -> frozenset[str]:
        """The stages bound to a port that asks a model (`Port.asks_model`)."""
        return frozenset(s.name for s in self.stages if any(p.asks_model for p in s.ports))
