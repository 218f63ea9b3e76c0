"""Payloads of the `request` workflow: the inbound request, stage results, signals.

The `START` payload is the transport contract: exactly `source`, `request_type`, `subject`,
`body`, `account_tier` and `requested_action` (the event id travels in the envelope), the
first, second and fourth from closed sets. It is normalised while it is validated — `source`
stripped and lower-cased, runs of whitespace in `subject` and `body` collapsed, nothing
summarised or translated — so the projector's idempotency fingerprint is taken over the
canonical form and a replay that differs only in spacing is still a replay.

Whether the requested action is one this workflow performs is *eligibility*, decided by the
validate stage, not transport validity: an unknown action is a well-formed request that the
workflow declines (`unsupported_request`), an unknown source is a malformed message.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BeforeValidator, ConfigDict, Field

from interlock import ModelCall, Payload, PolicyCheck, ShortText, Text

Source = Literal["web_form", "partner_portal"]
RequestType = Literal["support", "billing", "sales", "security"]
AccountTier = Literal["standard", "priority"]
Route = Literal["service_desk", "finance", "commercial", "security_review"]
Effect = Literal["create_follow_up", "queue_account_review", "send_internal_notification"]
Basis = Literal["route", "approval"]
VersionName = Literal["workflow", "normalization", "classifier", "prompt", "policy"]

EFFECTS: tuple[str, ...] = get_args(Effect)
"""The only operations the request workflow may ever perform."""
APPROVAL_EFFECTS: tuple[str, ...] = ("queue_account_review",)
"""Effects that need a human approval bound to the operation before they execute."""
NORMALIZATION_VERSION = "normalize-1"

Fingerprint = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Versions = dict[VersionName, ShortText]


def canonical_source(value: Any) -> Any:
    """`source` stripped and lower-cased; anything but a string is left for validation."""
    return value.strip().lower() if isinstance(value, str) else value


def collapse_whitespace(value: Any) -> Any:
    """Runs of whitespace become one space, ends trimmed; meaning is never rewritten."""
    return " ".join(value.split()) if isinstance(value, str) else value


def normalize(event: dict[str, Any]) -> dict[str, Any]:
    """The canonical form of a request's fields (pure; unknown keys are kept as they are)."""
    canonical = dict(event)
    if "source" in canonical:
        canonical["source"] = canonical_source(canonical["source"])
    for key in ("subject", "body"):
        if key in canonical:
            canonical[key] = collapse_whitespace(canonical[key])
    return canonical


class InboundRequest(Payload):
    """The `START` payload on `wf.in.request.request`, normalised as it is validated."""

    source: Annotated[Source, BeforeValidator(canonical_source)]
    request_type: RequestType
    subject: Annotated[
        str, BeforeValidator(collapse_whitespace), Field(min_length=1, max_length=500)
    ]
    body: Annotated[
        str, BeforeValidator(collapse_whitespace), Field(min_length=1, max_length=20_000)
    ]
    account_tier: AccountTier
    requested_action: ShortText


class Eligibility(Payload):
    """The validate stage's verdict that the workflow performs the requested action."""

    requested_action: Effect


class Ineligible(Payload):
    requested_action: ShortText
    allowed: list[Effect]


class Normalization(Payload):
    """The canonical request's fingerprint, and the normalisation rules that produced it."""

    fingerprint: Fingerprint
    normalization_version: ShortText


class Evidence(Payload):
    """Local, deterministic evidence: nothing here comes from a model or the network."""

    priority: bool


class RoutingProposal(Payload):
    """The classifier's closed proposal; a recommendation, never an authorisation."""

    # The JSON schema the model is asked to meet keeps the title it was published with.
    model_config = ConfigDict(title="Decision")

    category: RequestType
    recommended_route: Route
    requested_effect: Effect
    reason_code: Annotated[str, Field(min_length=1, max_length=64)]


class Classification(Payload):
    decision: RoutingProposal
    call: ModelCall
    versions: Versions = Field(default_factory=dict)


class ClassificationRejected(Payload):
    """A proposal that failed its schema or allowlist (at classification or on resume)."""

    errors: list[Text]
    call: ModelCall | None = None
    versions: Versions = Field(default_factory=dict)


class RouteDecision(Payload):
    """The routing policy's verdict on a valid proposal: blocked or waiting for approval."""

    outcome: Literal["blocked", "approval_required"]
    route: Route
    effect: Effect
    policy_version: ShortText
    checks: list[PolicyCheck]
    versions: Versions = Field(default_factory=dict)


class Authorization(Payload):
    """The authority an effect executes under: an authorised route or a bound approval.

    `authorization_id` is the event id of the `EFFECT_AUTHORIZED` result that carries it, so
    an effect ledger row that records it points at the audit row that authorised it.
    """

    authorization_id: ShortText
    basis: Basis
    effect: Effect
    route: Route
    fingerprint: Fingerprint
    versions: Versions


class Approval(Payload):
    """A human's consent to one operation, valid only while all three still match the run.

    Free text, not enums: an approval naming another effect or version is well-formed and
    is decided (as stale), not dead-lettered."""

    workflow_version: ShortText
    policy_version: ShortText
    effect: ShortText
    comment: Text | None = None


class EffectDone(Payload):
    idempotency_key: ShortText
    operation_id: ShortText
    effect: Effect
    reconciled: bool = False
    """True when the effect was found by key after an ambiguous call, not returned by it."""


class Compensation(Payload):
    """An effect reversed at the provider (`reversal_id`), or found absent by its key."""

    idempotency_key: ShortText
    reversal_id: ShortText


class Cancellation(Payload):
    """An operator ends a run before its effect; the reason is for the audit trail."""

    reason: Text = ""
