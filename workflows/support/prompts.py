"""The support workflow's model tasks: their released prompts and deterministic rules."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from interlock import ModelTask, Prompt
from interlock.workflows.support.payloads import Category
from interlock.workflows.support.rules import classify_faults, classify_rules, recommend_rules

DATA = Path(__file__).parent / "data"
"""The classify task's labelled examples (the ``local`` model learns from them) and its
golden set (what `interlock eval` checks a model and prompt against; none of it is in the
examples)."""
SUPPORT_CLASSIFY_V1 = "support-classify-v1"
SUPPORT_RECOMMEND_V1 = "support-recommend-v1"


class ClassifierOutput(BaseModel):
    """What the model must return; every field required, nothing else allowed (the form
    OpenAI-compatible strict JSON-schema output demands)."""

    model_config = ConfigDict(extra="forbid")

    category: Category
    confidence: float = Field(ge=0, le=1)
    rationale: str = Field(max_length=2000)


CLASSIFY = ModelTask(
    name="classify",
    prompts=(
        Prompt(
            version=SUPPORT_CLASSIFY_V1,
            instructions=(
                "Classify the customer support ticket below into exactly one category:\n"
                '- "billing": charges, refunds, invoices, payments, subscriptions;\n'
                '- "access": logging in, passwords, locked accounts, two-factor '
                "authentication;\n"
                '- "technical": errors, crashes, bugs, slowness, outages.\n'
                "Return category, confidence (0 to 1: how sure you are that the category is "
                "right; use a low value when the ticket is ambiguous or fits none) and a one-"
                "sentence rationale."
            ),
        ),
    ),
    rules=classify_rules,
    output=ClassifierOutput,
    examples=DATA / "classify_examples.jsonl",
    label="category",
    faults=classify_faults,
    golden=DATA / "classify_golden.jsonl",
)
RECOMMEND = ModelTask(
    name="recommend",
    prompts=(
        Prompt(
            version=SUPPORT_RECOMMEND_V1,
            instructions=(
                "Propose one resolution for the support request below, using only the "
                "evidence given: the request, its classification, the policy and the account.\n"
                'action_type is one of "refund", "account_credit" or "no_action"; amount is a '
                'decimal string with two places (e.g. "25.00"); currency is the ISO 4217 code. '
                "Do not invent a policy limit or an exception: a reviewer and a policy check "
                "decide whether your proposal is allowed. If revision_feedback is present, "
                "revise your proposal to address it. Cite the evidence you relied on in "
                'evidence_refs as "policy:<policy_id>:v<policy_version>" and '
                '"account:<account_ref>", and explain the proposal in a short rationale.'
            ),
        ),
    ),
    rules=recommend_rules,
    # The approver signs the amount they approve (`Approval.amount`).
    approved={"amount": "approval.amount"},
)
MODEL_TASKS = (CLASSIFY, RECOMMEND)
