"""Interlock: a durable workflow runtime on NATS JetStream and PostgreSQL.

The public API for writing workflows as plugins. Everything a plugin needs is importable from
here (and, for its tests, from `interlock.testing`); the rest of the package is internal.

```python
from interlock import Plugin, Result, StageContext, Workflow, stage
```
Names are loaded on first use (PEP 562), so the runtime's component processes, which import
`interlock.<room>` modules directly, do not pay for the SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from interlock._sdk.builder import Retry, Timer, Workflow, check
    from interlock._sdk.models import ModelTask, Prompt, Rules
    from interlock._sdk.plugin import ENTRY_POINT_GROUP, Plugin, guard
    from interlock._sdk.ports import Adapter, AdapterContext, Port
    from interlock._sdk.results import Result
    from interlock._sdk.scenarios import Scenario, ScenarioRun
    from interlock._sdk.stages import StageContext, StageHandler, stage
    from interlock.contracts.definition import (
        REVIEW_TARGET,
        Announcement,
        Branch,
        Guard,
        Limit,
        Parallel,
        Transition,
        WorkflowDefinition,
    )
    from interlock.contracts.guards import GuardInput, PluginGuard
    from interlock.contracts.payloads import Empty, ErrorReport, Escalation, TimerFired
    from interlock.services.adapters.http import (
        HttpEffectConfig,
        HttpEffects,
        HttpReadConfig,
        HttpReader,
        KeyedRequest,
        SecretRef,
    )
    from interlock.services.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable

__all__ = [
    "ENTRY_POINT_GROUP",
    "REVIEW_TARGET",
    "Adapter",
    "AdapterContext",
    "Announcement",
    "Branch",
    "Empty",
    "ErrorReport",
    "Escalation",
    "ExternalRejected",
    "ExternalTimeout",
    "ExternalUnavailable",
    "Guard",
    "GuardInput",
    "HttpEffectConfig",
    "HttpEffects",
    "HttpReadConfig",
    "HttpReader",
    "KeyedRequest",
    "Limit",
    "ModelTask",
    "Parallel",
    "Plugin",
    "PluginGuard",
    "Port",
    "Prompt",
    "Result",
    "Retry",
    "Rules",
    "Scenario",
    "ScenarioRun",
    "SecretRef",
    "StageContext",
    "StageHandler",
    "Timer",
    "TimerFired",
    "Transition",
    "Workflow",
    "WorkflowDefinition",
    "check",
    "guard",
    "stage",
]

_WHERE = {
    "interlock._sdk.builder": ("Retry", "Timer", "Workflow", "check"),
    "interlock._sdk.plugin": ("ENTRY_POINT_GROUP", "Plugin", "guard"),
    "interlock._sdk.models": ("ModelTask", "Prompt", "Rules"),
    "interlock.contracts.guards": ("GuardInput", "PluginGuard"),
    "interlock._sdk.ports": ("Adapter", "AdapterContext", "Port"),
    "interlock._sdk.results": ("Result",),
    "interlock._sdk.scenarios": ("Scenario", "ScenarioRun"),
    "interlock._sdk.stages": ("StageContext", "StageHandler", "stage"),
    "interlock.contracts.definition": (
        "REVIEW_TARGET",
        "Announcement",
        "Branch",
        "Guard",
        "Limit",
        "Parallel",
        "Transition",
        "WorkflowDefinition",
    ),
    "interlock.contracts.payloads": ("Empty", "ErrorReport", "Escalation", "TimerFired"),
    "interlock.services.errors": ("ExternalRejected", "ExternalTimeout", "ExternalUnavailable"),
    "interlock.services.adapters.http": (
        "HttpEffectConfig",
        "HttpEffects",
        "HttpReadConfig",
        "HttpReader",
        "KeyedRequest",
        "SecretRef",
    ),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'interlock' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
