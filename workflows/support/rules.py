"""The support workflow's deterministic model rules: how the ``rules`` model (no network, the
default) answers its tasks, from keywords, so the workflow runs without a provider:

- ``classify`` — inputs ``{"subject", "body"}`` → ``{"category", "confidence",
  "rationale"}``. Each category scores its keyword hits in the ticket; the best wins (ties
  in the order billing, access, technical). Confidence reflects the margin: 0.35 when no
  keyword matches (best guess ``technical``), 0.8 or more when only one category matches,
  between 0.5 and 0.8 when several do.
- ``recommend`` — inputs ``{"request", "classification", "policy", "account",
  "revision_feedback"}`` → ``{"action_type", "amount", "currency", "rationale",
  "evidence_refs"}``. A refund of the requested amount when the policy allows refunds (it
  is not capped at the policy maximum: the model only proposes, the policy check decides),
  an account credit otherwise or when the reviewer's feedback mentions "credit", and
  ``no_action`` when no amount was requested.

Test hooks, markers in the request's *subject* used by the demo scenarios:

- ``[invalid-output]`` — ``classify`` returns category ``"refund_now"`` (outside the schema)
  unless the call is a repair (``repair_errors`` non-empty), which gets a valid answer;
- ``[invalid-output-always]`` — ``classify`` stays invalid even on repair;
- ``[low-confidence]`` — ``classify`` reports confidence 0.4;
- ``[invalid-recommendation]`` — ``recommend`` proposes action type ``"wire_transfer"``
  unless the call is a repair.

Malformed inputs raise pydantic's `ValidationError` (the rules model reports it as
``invalid_model_input``). The answer depends only on the inputs, never on time or chance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from interlock import Amount

HOOK_INVALID_OUTPUT = "[invalid-output]"
HOOK_INVALID_OUTPUT_ALWAYS = "[invalid-output-always]"
HOOK_LOW_CONFIDENCE = "[low-confidence]"
HOOK_INVALID_RECOMMENDATION = "[invalid-recommendation]"

KEYWORDS: dict[str, tuple[str, ...]] = {
    "billing": (
        "charge", "charged", "refund", "invoice", "payment", "billing", "subscription",
    ),
    "access": ("login", "log in", "password", "locked", "access", "2fa", "account access"),
    "technical": ("error", "crash", "bug", "slow", "outage", "broken"),
}  # fmt: skip
FALLBACK_CATEGORY = "technical"
_PATTERNS = {
    category: [(word, re.compile(rf"\b{re.escape(word)}\b")) for word in words]
    for category, words in KEYWORDS.items()
}


class _Inputs(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Ticket(_Inputs):
    subject: str
    body: str


class _RequestIn(_Inputs):
    subject: str
    amount: Amount | None = None
    currency: str | None = None


class _PolicyIn(_Inputs):
    policy_id: str
    policy_version: int
    allowed_actions: list[str]


class _AccountIn(_Inputs):
    account_ref: str
    currency: str


class _FeedbackIn(_Inputs):
    feedback: str = ""


class _RecommendIn(_Inputs):
    request: _RequestIn
    policy: _PolicyIn
    account: _AccountIn
    revision_feedback: _FeedbackIn | None = None


def classify_rules(inputs: Mapping[str, Any], repairing: bool) -> dict[str, Any]:
    """The ``classify`` task's rules (`Rules`)."""
    return classify(_Ticket.model_validate(inputs), repairing=repairing)


def recommend_rules(inputs: Mapping[str, Any], repairing: bool) -> dict[str, Any]:
    """The ``recommend`` task's rules (`Rules`)."""
    return recommend(_RecommendIn.model_validate(inputs), repairing=repairing)


def classify(ticket: _Ticket, *, repairing: bool) -> dict[str, Any]:
    """Keyword-scored category with a margin-based confidence, plus the hooks."""
    text = f"{ticket.subject}\n{ticket.body}".lower()
    hits = {c: [w for w, p in patterns if p.search(text)] for c, patterns in _PATTERNS.items()}
    ranked = sorted(KEYWORDS, key=lambda c: -len(hits[c]))  # stable: ties keep table order
    best = ranked[0] if hits[ranked[0]] else FALLBACK_CATEGORY
    confidence = _confidence([len(hits[c]) for c in ranked])
    if hits[best]:
        rationale = f"matched {best} keywords: {', '.join(hits[best])}"
    else:
        rationale = f"no category keyword matched; best guess {best}"
    answer = {"category": best, "confidence": confidence, "rationale": rationale}
    return _classify_hooks(ticket.subject, answer, repairing=repairing)


def _classify_hooks(subject: str, answer: dict[str, Any], *, repairing: bool) -> dict[str, Any]:
    if HOOK_LOW_CONFIDENCE in subject:
        answer = {**answer, "confidence": 0.4}
    if HOOK_INVALID_OUTPUT_ALWAYS in subject or (HOOK_INVALID_OUTPUT in subject and not repairing):
        answer = {**answer, "category": "refund_now"}
    return answer


def classify_faults(
    inputs: Mapping[str, object], answer: Mapping[str, object], repairing: bool
) -> dict[str, Any]:
    """The ``classify`` hooks applied to another offline model's answer (`Faults`)."""
    subject = _Ticket.model_validate(inputs).subject
    return _classify_hooks(subject, dict(answer), repairing=repairing)


def _confidence(counts: list[int]) -> float:
    """0.35 without evidence; 0.8 to 0.95 for one clear category; 0.5 to 0.8 by margin otherwise."""
    top, second = counts[0], counts[1]
    if top == 0:
        return 0.35
    if second == 0:
        return round(min(0.95, 0.8 + 0.05 * (top - 1)), 2)
    return round(0.5 + 0.3 * (top - second) / sum(counts), 2)


def recommend(inputs: _RecommendIn, *, repairing: bool) -> dict[str, Any]:
    """Refund what was asked if the policy allows refunds, else an account credit."""
    request, policy, account = inputs.request, inputs.policy, inputs.account
    amount = (request.amount or Decimal(0)).quantize(Decimal("0.01"))
    currency = request.currency or account.currency
    feedback = inputs.revision_feedback.feedback if inputs.revision_feedback else ""
    if amount == 0:
        action, why = "no_action", "no amount was requested"
    elif "credit" in feedback.lower():
        action, why = "account_credit", "the reviewer asked for a credit"
    elif "refund" in policy.allowed_actions:
        action, why = "refund", f"policy {policy.policy_id} allows refunds"
    else:
        action, why = "account_credit", f"policy {policy.policy_id} does not allow refunds"
    if HOOK_INVALID_RECOMMENDATION in request.subject and not repairing:
        action = "wire_transfer"
    return {
        "action_type": action,
        "amount": str(amount),
        "currency": currency,
        "rationale": f"proposed {action} of {amount} {currency}: {why}",
        "evidence_refs": [
            f"policy:{policy.policy_id}:v{policy.policy_version}",
            f"account:{account.account_ref}",
        ],
    }
