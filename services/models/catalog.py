"""`TaskCatalog`: the model tasks a model client serves, as the workflows' plugins declare
them: their released prompt templates by version and their deterministic rules by task."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from interlock.services.models.local_task import LocalTask
from interlock.services.models.prompts import Templates

RulesFn = Callable[[Mapping[str, object], bool], Mapping[str, object]]
"""`rules(inputs, repairing) -> output`, deterministic; see `RulesModel`."""


@dataclass(frozen=True)
class TaskCatalog:
    templates: Templates = field(default_factory=dict)
    """Released prompt templates by `prompt_version`."""
    rules: Mapping[str, RulesFn] = field(default_factory=dict)
    """Deterministic answers by task, for the ``rules`` model."""
    local: Mapping[str, LocalTask] = field(default_factory=dict)
    """Labelled examples by task, for the ``local`` model."""
