"""The support workflow's stages, each a thin typed handler over its ports."""

from __future__ import annotations

from interlock.workflows.support.stages.act import compensate, execute_action, notify_customer
from interlock.workflows.support.stages.classify import classify
from interlock.workflows.support.stages.evidence import inspect_account, retrieve_policy
from interlock.workflows.support.stages.recommend import recommend
from interlock.workflows.support.stages.validate import validate_policy

STAGES = (
    classify,
    retrieve_policy,
    inspect_account,
    recommend,
    validate_policy,
    execute_action,
    notify_customer,
    compensate,
)
