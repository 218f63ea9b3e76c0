"""Interlock: a durable workflow runtime on NATS JetStream and PostgreSQL.

The public API for writing workflows as plugins. Everything a plugin needs is importable from
here (and, for its tests, from `interlock.testing`); the rest of the package is internal.

```python
from interlock import Plugin, Result, StageContext, Workflow, stage
```
An upstream system starts and signals workflows with `Client` (`interlock.client`), naming the
`Actor` it acts as; every error Interlock raises on purpose derives from `InterlockError`.
Names are loaded on first use (PEP 562), so the runtime's component processes, which import
`interlock.<room>` modules directly, do not pay for the SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from interlock._sdk.builder import Retry, Timer, Workflow, check
    from interlock._sdk.effects import effect_is
    from interlock._sdk.guards import (
        Anything,
        Typed,
        actor_role_in,
        amount_within_limit,
        approval_valid,
        cancel_requested,
        confidence_at_least,
        guard,
        has_data,
        has_review_target,
        payload_matches,
        payload_not_in,
        typed_guard,
    )
    from interlock._sdk.models import Answer, ModelTask, Prompt, Rules, ask
    from interlock._sdk.plugin import ENTRY_POINT_GROUP, Plugin
    from interlock._sdk.ports import Adapter, AdapterContext, Port
    from interlock._sdk.process import Approval, Cancellation, Rejection
    from interlock._sdk.results import Result
    from interlock._sdk.scenarios import Scenario, ScenarioRun
    from interlock._sdk.stages import StageContext, StageHandler, Transient, stage
    from interlock.client import Client
    from interlock.client.views import (
        InvalidPayload,
        NotConnected,
        StartRefused,
        UnknownWorkflowType,
        WorkflowView,
    )
    from interlock.config.plugins import PluginError, validate
    from interlock.contracts.definition import (
        REVIEW_TARGET,
        Announcement,
        Branch,
        Guard,
        HumanWait,
        Limit,
        Parallel,
        Transition,
        WorkflowDefinition,
    )
    from interlock.contracts.effects import (
        COMPENSATE_EVENT,
        CONFIRM_EVENT,
        RERUN_EVENT,
        Effect,
        EffectStatus,
        Terminal,
    )
    from interlock.contracts.envelope import Actor, summarise
    from interlock.contracts.errors import InterlockError, PublishFailed
    from interlock.contracts.guards import GuardInput, PluginGuard
    from interlock.contracts.ids import fingerprint
    from interlock.contracts.payloads import (
        Amount,
        Currency,
        Empty,
        ErrorReport,
        Escalation,
        ModelCall,
        ModelOutputInvalid,
        Payload,
        PolicyCheck,
        ShortText,
        Text,
        TimerFired,
        TokenUsage,
    )
    from interlock.services.adapters.http import (
        HttpEffectConfig,
        HttpEffects,
        HttpReadConfig,
        HttpReader,
        KeyedRequest,
        SecretRef,
    )
    from interlock.services.effects import KeyedEffects, execute_once
    from interlock.services.errors import (
        ExternalRejected,
        ExternalTimeout,
        ExternalUnavailable,
        OutcomeUnknown,
    )
    from interlock.services.ports import (
        EffectProvider,
        EffectReceipt,
        EffectRequest,
        EffectReverser,
        ModelClient,
        ModelReply,
        ModelRequest,
        output_schema,
    )

__all__ = [
    "COMPENSATE_EVENT",
    "CONFIRM_EVENT",
    "ENTRY_POINT_GROUP",
    "RERUN_EVENT",
    "REVIEW_TARGET",
    "Actor",
    "Adapter",
    "AdapterContext",
    "Amount",
    "Announcement",
    "Answer",
    "Anything",
    "Approval",
    "Branch",
    "Cancellation",
    "Client",
    "Currency",
    "Effect",
    "EffectProvider",
    "EffectReceipt",
    "EffectRequest",
    "EffectReverser",
    "EffectStatus",
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
    "HumanWait",
    "InterlockError",
    "InvalidPayload",
    "KeyedEffects",
    "KeyedRequest",
    "Limit",
    "ModelCall",
    "ModelClient",
    "ModelOutputInvalid",
    "ModelReply",
    "ModelRequest",
    "ModelTask",
    "NotConnected",
    "OutcomeUnknown",
    "Parallel",
    "Payload",
    "Plugin",
    "PluginError",
    "PluginGuard",
    "PolicyCheck",
    "Port",
    "Prompt",
    "PublishFailed",
    "Rejection",
    "Result",
    "Retry",
    "Rules",
    "Scenario",
    "ScenarioRun",
    "SecretRef",
    "ShortText",
    "StageContext",
    "StageHandler",
    "StartRefused",
    "Terminal",
    "Text",
    "Timer",
    "TimerFired",
    "TokenUsage",
    "Transient",
    "Transition",
    "Typed",
    "UnknownWorkflowType",
    "Workflow",
    "WorkflowDefinition",
    "WorkflowView",
    "actor_role_in",
    "amount_within_limit",
    "approval_valid",
    "ask",
    "cancel_requested",
    "check",
    "confidence_at_least",
    "effect_is",
    "execute_once",
    "fingerprint",
    "guard",
    "has_data",
    "has_review_target",
    "output_schema",
    "payload_matches",
    "payload_not_in",
    "stage",
    "summarise",
    "typed_guard",
    "validate",
]

_WHERE = {
    "interlock._sdk.builder": ("Retry", "Timer", "Workflow", "check"),
    "interlock._sdk.effects": ("effect_is",),
    "interlock.contracts.effects": (
        "COMPENSATE_EVENT",
        "CONFIRM_EVENT",
        "RERUN_EVENT",
        "Effect",
        "EffectStatus",
        "Terminal",
    ),
    "interlock._sdk.plugin": ("ENTRY_POINT_GROUP", "Plugin"),
    "interlock._sdk.guards": (
        "Anything",
        "Typed",
        "actor_role_in",
        "amount_within_limit",
        "approval_valid",
        "cancel_requested",
        "confidence_at_least",
        "guard",
        "has_data",
        "has_review_target",
        "payload_matches",
        "payload_not_in",
        "typed_guard",
    ),
    "interlock._sdk.process": ("Approval", "Cancellation", "Rejection"),
    "interlock.config.plugins": ("PluginError", "validate"),
    "interlock._sdk.models": ("Answer", "ModelTask", "Prompt", "Rules", "ask"),
    "interlock.contracts.guards": ("GuardInput", "PluginGuard"),
    "interlock._sdk.ports": ("Adapter", "AdapterContext", "Port"),
    "interlock._sdk.results": ("Result",),
    "interlock._sdk.scenarios": ("Scenario", "ScenarioRun"),
    "interlock._sdk.stages": ("StageContext", "StageHandler", "Transient", "stage"),
    "interlock.contracts.definition": (
        "REVIEW_TARGET",
        "Announcement",
        "Branch",
        "Guard",
        "HumanWait",
        "Limit",
        "Parallel",
        "Transition",
        "WorkflowDefinition",
    ),
    "interlock.contracts.envelope": ("Actor", "summarise"),
    "interlock.contracts.errors": ("InterlockError", "PublishFailed"),
    "interlock.client": ("Client",),
    "interlock.client.views": (
        "InvalidPayload",
        "NotConnected",
        "StartRefused",
        "UnknownWorkflowType",
        "WorkflowView",
    ),
    "interlock.contracts.ids": ("fingerprint",),
    "interlock.contracts.payloads": (
        "Amount",
        "Currency",
        "Empty",
        "ErrorReport",
        "Escalation",
        "ModelCall",
        "ModelOutputInvalid",
        "Payload",
        "PolicyCheck",
        "ShortText",
        "Text",
        "TimerFired",
        "TokenUsage",
    ),
    "interlock.services.effects": ("KeyedEffects", "execute_once"),
    "interlock.services.errors": (
        "ExternalRejected",
        "ExternalTimeout",
        "ExternalUnavailable",
        "OutcomeUnknown",
    ),
    "interlock.services.ports": (
        "EffectProvider",
        "EffectReceipt",
        "EffectRequest",
        "EffectReverser",
        "ModelClient",
        "ModelReply",
        "ModelRequest",
        "output_schema",
    ),
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
