"""The support workflow's stage services, each a thin handler over its ports."""

from __future__ import annotations

from dataclasses import dataclass

from interlock.services.ports import AccountApi, ActionProvider, ModelClient, Notifier, PolicyStore
from interlock.services.runtime.stage import Handler, StageWorker, stages_of
from interlock.workflows.support.stages.act import Compensate, ExecuteAction, NotifyCustomer
from interlock.workflows.support.stages.classify import Classify
from interlock.workflows.support.stages.evidence import InspectAccount, RetrievePolicy
from interlock.workflows.support.stages.recommend import Recommend
from interlock.workflows.support.stages.validate import ValidatePolicy

WORKFLOW_TYPE = "support"


@dataclass(frozen=True)
class SupportPorts:
    model: ModelClient
    accounts: AccountApi
    policies: PolicyStore
    actions: ActionProvider
    notifier: Notifier


EFFECTFUL = frozenset({"execute_action", "compensate", "notify_customer"})


def stages(ports: SupportPorts) -> dict[str, StageWorker]:
    """Every support stage, by name, wired to `ports`."""
    handlers: dict[str, Handler] = {
        "classify": Classify(ports.model),
        "retrieve_policy": RetrievePolicy(ports.policies),
        "inspect_account": InspectAccount(ports.accounts),
        "generate_recommendation": Recommend(ports.model),
        "validate_policy": ValidatePolicy(ports.policies),
        "execute_action": ExecuteAction(ports.actions),
        "notify_customer": NotifyCustomer(ports.notifier),
        "compensate": Compensate(ports.actions),
    }
    return stages_of(WORKFLOW_TYPE, handlers, EFFECTFUL)
