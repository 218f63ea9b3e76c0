"""The request stages' results: one per event, each the event's payload model named for it."""

from __future__ import annotations

from interlock import ErrorReport, Result
from interlock.workflows.request import payloads as rp


class Validated(rp.Eligibility, Result):
    __event__ = "REQUEST_VALIDATED"


class Unsupported(rp.Ineligible, Result):
    """A well-formed request for an action the workflow does not perform."""

    __event__ = "REQUEST_UNSUPPORTED"


class Normalized(rp.Normalization, Result):
    __event__ = "REQUEST_NORMALIZED"


class Enriched(rp.Evidence, Result):
    __event__ = "REQUEST_ENRICHED"


class Classified(rp.Classification, Result):
    __event__ = "REQUEST_CLASSIFIED"


class ClassificationInvalid(rp.ClassificationRejected, Result):
    """A proposal that failed its schema or allowlist; a rejection on resume records no call."""

    __event__ = "CLASSIFICATION_INVALID"
    __sparse__ = True


class RouteBlocked(rp.RouteDecision, Result):
    __event__ = "ROUTE_BLOCKED"


class RoutedForApproval(rp.RouteDecision, Result):
    __event__ = "ROUTED_FOR_APPROVAL"


class Authorized(rp.Authorization, Result):
    __event__ = "EFFECT_AUTHORIZED"


class EffectExecuted(rp.EffectDone, Result):
    __event__ = "EFFECT_EXECUTED"


class Refused(ErrorReport, Result):
    """The stage refuses the job for good (its `error_class` says why)."""

    __event__ = "PERMANENT_ERROR"
    __sparse__ = True


class EffectCompensated(rp.Compensation, Result):
    __event__ = "EFFECT_COMPENSATED"


class CompensationFailed(ErrorReport, Result):
    """The provider refused the reversal (its `error_class` says why): the effect stands."""

    __event__ = "COMPENSATION_FAILED"
    __sparse__ = True
