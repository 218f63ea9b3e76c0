"""Interlock: a durable workflow runtime on NATS JetStream and PostgreSQL.

The public API for writing workflows as plugins: the builder, stages, guards, `Plugin`,
`Result`, the payload types and the ports. Everything a plugin needs is importable from here
or from one of the public namespaces beside it; the rest of the package is internal.

```python
from interlock import Plugin, Result, StageContext, Workflow, stage
from interlock.errors import ExternalRejected, InterlockError
```

- `interlock.errors`: every error a user may catch (all derive from `InterlockError`);
- `interlock.adapters.http`: the HTTP adapters a user points at their own systems;
- `interlock.definition`: the definition model the `Workflow` builder produces;
- `interlock.client`: `Client`, with which an upstream system starts and signals workflows;
- `interlock.testing`: `WorkflowTestEnv`, a plugin's workflows run in-process.

Names are loaded on first use (PEP 562), so the runtime's component processes, which import
`interlock.<room>` modules directly, do not pay for the SDK. `_EXPORTS` is the one list of
them; the `TYPE_CHECKING` imports repeat it for type checkers (a unit test holds the two
together). A name in `_MOVED` lives in another namespace now: it is still importable from
here, with a `DeprecationWarning` naming the new place, until the next release.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from interlock._sdk.builder import Retry as Retry
    from interlock._sdk.builder import Timer as Timer
    from interlock._sdk.builder import Workflow as Workflow
    from interlock._sdk.builder import check as check
    from interlock._sdk.effects import effect_is as effect_is
    from interlock._sdk.errors import Transient as Transient
    from interlock._sdk.guards import Anything as Anything
    from interlock._sdk.guards import Typed as Typed
    from interlock._sdk.guards import actor_role_in as actor_role_in
    from interlock._sdk.guards import amount_within_limit as amount_within_limit
    from interlock._sdk.guards import approval_valid as approval_valid
    from interlock._sdk.guards import cancel_requested as cancel_requested
    from interlock._sdk.guards import confidence_at_least as confidence_at_least
    from interlock._sdk.guards import guard as guard
    from interlock._sdk.guards import has_data as has_data
    from interlock._sdk.guards import has_review_target as has_review_target
    from interlock._sdk.guards import payload_matches as payload_matches
    from interlock._sdk.guards import payload_not_in as payload_not_in
    from interlock._sdk.guards import typed_guard as typed_guard
    from interlock._sdk.models import Answer as Answer
    from interlock._sdk.models import ModelTask as ModelTask
    from interlock._sdk.models import Prompt as Prompt
    from interlock._sdk.models import Rules as Rules
    from interlock._sdk.models import ask as ask
    from interlock._sdk.plugin import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from interlock._sdk.plugin import Plugin as Plugin
    from interlock._sdk.ports import Adapter as Adapter
    from interlock._sdk.ports import AdapterContext as AdapterContext
    from interlock._sdk.ports import Port as Port
    from interlock._sdk.process import Approval as Approval
    from interlock._sdk.process import Cancellation as Cancellation
    from interlock._sdk.process import Rejection as Rejection
    from interlock._sdk.results import Result as Result
    from interlock._sdk.scenarios import Scenario as Scenario
    from interlock._sdk.scenarios import ScenarioRun as ScenarioRun
    from interlock._sdk.stages import StageContext as StageContext
    from interlock._sdk.stages import StageHandler as StageHandler
    from interlock._sdk.stages import stage as stage
    from interlock.client import Client as Client
    from interlock.client.views import WorkflowView as WorkflowView
    from interlock.config.plugins import validate as validate
    from interlock.contracts.effects import COMPENSATE_EVENT as COMPENSATE_EVENT
    from interlock.contracts.effects import CONFIRM_EVENT as CONFIRM_EVENT
    from interlock.contracts.effects import RERUN_EVENT as RERUN_EVENT
    from interlock.contracts.effects import Effect as Effect
    from interlock.contracts.effects import EffectStatus as EffectStatus
    from interlock.contracts.effects import Terminal as Terminal
    from interlock.contracts.envelope import Actor as Actor
    from interlock.contracts.envelope import summarise as summarise
    from interlock.contracts.guards import GuardInput as GuardInput
    from interlock.contracts.guards import PluginGuard as PluginGuard
    from interlock.contracts.ids import fingerprint as fingerprint
    from interlock.contracts.payloads import Amount as Amount
    from interlock.contracts.payloads import Currency as Currency
    from interlock.contracts.payloads import Empty as Empty
    from interlock.contracts.payloads import ErrorReport as ErrorReport
    from interlock.contracts.payloads import Escalation as Escalation
    from interlock.contracts.payloads import ModelCall as ModelCall
    from interlock.contracts.payloads import ModelOutputInvalid as ModelOutputInvalid
    from interlock.contracts.payloads import Payload as Payload
    from interlock.contracts.payloads import PolicyCheck as PolicyCheck
    from interlock.contracts.payloads import ShortText as ShortText
    from interlock.contracts.payloads import Text as Text
    from interlock.contracts.payloads import TimerFired as TimerFired
    from interlock.contracts.payloads import TokenUsage as TokenUsage
    from interlock.services.effects import KeyedEffects as KeyedEffects
    from interlock.services.effects import execute_once as execute_once
    from interlock.services.ports import EffectProvider as EffectProvider
    from interlock.services.ports import EffectReceipt as EffectReceipt
    from interlock.services.ports import EffectRequest as EffectRequest
    from interlock.services.ports import EffectReverser as EffectReverser
    from interlock.services.ports import ModelClient as ModelClient
    from interlock.services.ports import ModelReply as ModelReply
    from interlock.services.ports import ModelRequest as ModelRequest
    from interlock.services.ports import output_schema as output_schema

_EXPORTS: dict[str, str] = {
    # name: the module that defines it
    "Retry": "interlock._sdk.builder",
    "Timer": "interlock._sdk.builder",
    "Workflow": "interlock._sdk.builder",
    "check": "interlock._sdk.builder",
    "effect_is": "interlock._sdk.effects",
    "Transient": "interlock._sdk.errors",
    "Anything": "interlock._sdk.guards",
    "Typed": "interlock._sdk.guards",
    "actor_role_in": "interlock._sdk.guards",
    "amount_within_limit": "interlock._sdk.guards",
    "approval_valid": "interlock._sdk.guards",
    "cancel_requested": "interlock._sdk.guards",
    "confidence_at_least": "interlock._sdk.guards",
    "guard": "interlock._sdk.guards",
    "has_data": "interlock._sdk.guards",
    "has_review_target": "interlock._sdk.guards",
    "payload_matches": "interlock._sdk.guards",
    "payload_not_in": "interlock._sdk.guards",
    "typed_guard": "interlock._sdk.guards",
    "Answer": "interlock._sdk.models",
    "ModelTask": "interlock._sdk.models",
    "Prompt": "interlock._sdk.models",
    "Rules": "interlock._sdk.models",
    "ask": "interlock._sdk.models",
    "ENTRY_POINT_GROUP": "interlock._sdk.plugin",
    "Plugin": "interlock._sdk.plugin",
    "Adapter": "interlock._sdk.ports",
    "AdapterContext": "interlock._sdk.ports",
    "Port": "interlock._sdk.ports",
    "Approval": "interlock._sdk.process",
    "Cancellation": "interlock._sdk.process",
    "Rejection": "interlock._sdk.process",
    "Result": "interlock._sdk.results",
    "Scenario": "interlock._sdk.scenarios",
    "ScenarioRun": "interlock._sdk.scenarios",
    "StageContext": "interlock._sdk.stages",
    "StageHandler": "interlock._sdk.stages",
    "stage": "interlock._sdk.stages",
    "Client": "interlock.client",
    "WorkflowView": "interlock.client.views",
    "validate": "interlock.config.plugins",
    "COMPENSATE_EVENT": "interlock.contracts.effects",
    "CONFIRM_EVENT": "interlock.contracts.effects",
    "RERUN_EVENT": "interlock.contracts.effects",
    "Effect": "interlock.contracts.effects",
    "EffectStatus": "interlock.contracts.effects",
    "Terminal": "interlock.contracts.effects",
    "Actor": "interlock.contracts.envelope",
    "summarise": "interlock.contracts.envelope",
    "GuardInput": "interlock.contracts.guards",
    "PluginGuard": "interlock.contracts.guards",
    "fingerprint": "interlock.contracts.ids",
    "Amount": "interlock.contracts.payloads",
    "Currency": "interlock.contracts.payloads",
    "Empty": "interlock.contracts.payloads",
    "ErrorReport": "interlock.contracts.payloads",
    "Escalation": "interlock.contracts.payloads",
    "ModelCall": "interlock.contracts.payloads",
    "ModelOutputInvalid": "interlock.contracts.payloads",
    "Payload": "interlock.contracts.payloads",
    "PolicyCheck": "interlock.contracts.payloads",
    "ShortText": "interlock.contracts.payloads",
    "Text": "interlock.contracts.payloads",
    "TimerFired": "interlock.contracts.payloads",
    "TokenUsage": "interlock.contracts.payloads",
    "KeyedEffects": "interlock.services.effects",
    "execute_once": "interlock.services.effects",
    "EffectProvider": "interlock.services.ports",
    "EffectReceipt": "interlock.services.ports",
    "EffectRequest": "interlock.services.ports",
    "EffectReverser": "interlock.services.ports",
    "ModelClient": "interlock.services.ports",
    "ModelReply": "interlock.services.ports",
    "ModelRequest": "interlock.services.ports",
    "output_schema": "interlock.services.ports",
}

_MOVED: dict[str, str] = {
    # name: the public namespace it moved to (importable from here until the next release)
    "HttpEffectConfig": "interlock.adapters.http",
    "HttpEffects": "interlock.adapters.http",
    "HttpReadConfig": "interlock.adapters.http",
    "HttpReader": "interlock.adapters.http",
    "KeyedRequest": "interlock.adapters.http",
    "SecretRef": "interlock.adapters.http",
    "REVIEW_TARGET": "interlock.definition",
    "Announcement": "interlock.definition",
    "Branch": "interlock.definition",
    "Guard": "interlock.definition",
    "HumanWait": "interlock.definition",
    "Limit": "interlock.definition",
    "Parallel": "interlock.definition",
    "Transition": "interlock.definition",
    "WorkflowDefinition": "interlock.definition",
    "ExternalRejected": "interlock.errors",
    "ExternalTimeout": "interlock.errors",
    "ExternalUnavailable": "interlock.errors",
    "InterlockError": "interlock.errors",
    "InvalidPayload": "interlock.errors",
    "NotConnected": "interlock.errors",
    "OutcomeUnknown": "interlock.errors",
    "PluginError": "interlock.errors",
    "PublishFailed": "interlock.errors",
    "StartRefused": "interlock.errors",
    "UnknownWorkflowType": "interlock.errors",
}

__all__ = list(_EXPORTS)

if not TYPE_CHECKING:  # type checkers see the imports above, and no moved name

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is not None:
            value = getattr(import_module(module), name)
            globals()[name] = value
            return value
        moved = _MOVED.get(name)
        if moved is not None:
            warnings.warn(
                f"`interlock.{name}` moved to `{moved}.{name}`: import it from there "
                "(the old name goes in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(import_module(moved), name)
        raise AttributeError(f"module 'interlock' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
