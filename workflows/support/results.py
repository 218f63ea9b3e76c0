"""The support stages' results: one per event, each the event's payload model named for it."""

from __future__ import annotations

from interlock import ErrorReport, ModelOutputInvalid, Result
from interlock.workflows.support import payloads as sp


class Classified(sp.Classification, Result):
    __event__ = "CLASSIFICATION_SUCCEEDED"


class OutputInvalid(ModelOutputInvalid, Result):
    """The model's answer failed validation: the workflow decides whether to ask again."""

    __event__ = "MODEL_OUTPUT_INVALID"


class PolicyRetrieved(sp.PolicyEvidence, Result):
    __event__ = "POLICY_RETRIEVED"


class AccountInspected(sp.AccountEvidence, Result):
    __event__ = "ACCOUNT_INSPECTED"


class Recommended(sp.Recommendation, Result):
    __event__ = "RECOMMENDATION_GENERATED"


class PolicyValid(sp.ValidationReport, Result):
    __event__ = "POLICY_VALID"


class PolicyInvalid(sp.ValidationReport, Result):
    """A hard check failed: a business rejection."""

    __event__ = "POLICY_INVALID"


class PolicyUnclear(sp.ValidationReport, Result):
    """The policy changed since the evidence was gathered: conflicting sources go to a human."""

    __event__ = "POLICY_UNCLEAR"


class ActionExecuted(sp.ActionReceipt, Result):
    __event__ = "ACTION_EXECUTED"


class InvariantFailed(sp.InvariantFailure, Result):
    __event__ = "POST_ACTION_INVARIANT_FAILED"


class CustomerNotified(sp.NotificationReceipt, Result):
    __event__ = "CUSTOMER_NOTIFIED"


class Compensated(sp.CompensationReceipt, Result):
    __event__ = "COMPENSATION_SUCCEEDED"


class CompensationFailed(ErrorReport, Result):
    __event__ = "COMPENSATION_FAILED"
    __sparse__ = True
