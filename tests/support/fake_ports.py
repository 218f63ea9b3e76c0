"""In-memory adapters for the built-in plugins' ports, for `interlock.testing` runs: a model
answering each task from a script, the support desk's systems and the request workflow's
effect ledger, each able to fail on cue (the exceptions queued in `failures`)."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from interlock import EffectReceipt, EffectRequest, ModelReply, ModelRequest
from interlock.errors import ExternalTimeout
from interlock.workflows.support.systems import (
    AccountSnapshot,
    ActionReceipt,
    ActionRequest,
    Delivery,
    PolicyDocument,
)


class Failing:
    """Raises the queued exceptions, one per call, before answering normally."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def _call(self) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


class ScriptedModel(Failing):
    """Answers each task with its scripted output (the last one repeats)."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]], *failures: Exception) -> None:
        super().__init__(*failures)
        self.answers = answers
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        self._call()
        script = self.answers[request.task]
        output = script.pop(0) if len(script) > 1 else script[0]
        return ModelReply(output=output, model="scripted", model_version="s-1", latency_ms=1.0)


class Accounts(Failing):
    def __init__(self, *failures: Exception, status: str = "active") -> None:
        super().__init__(*failures)
        self.status = status

    async def inspect(self, customer_id: str) -> AccountSnapshot:
        self._call()
        return AccountSnapshot.model_validate(
            {
                "account_ref": f"acct-{customer_id}",
                "customer_id": customer_id,
                "status": self.status,
                "currency": "EUR",
            }
        )


class Policies(Failing):
    def __init__(self, *failures: Exception, max_amount: str = "100.00") -> None:
        super().__init__(*failures)
        self.document = PolicyDocument(
            policy_id="refunds",
            policy_version=3,
            category="billing",
            max_amount=Decimal(max_amount),
            allowed_actions=["refund", "account_credit"],
        )

    async def current(self, category: str) -> PolicyDocument:
        self._call()
        return self.document.model_copy(update={"category": category})

    async def version(self, policy_id: str, version: int) -> PolicyDocument:
        return self.document


class Actions(Failing):
    """Performs each idempotency key once."""

    def __init__(self, *failures: Exception) -> None:
        super().__init__(*failures)
        self.receipts: dict[str, ActionReceipt] = {}
        self.reversed: list[str] = []
        self._ops = itertools.count(1)

    async def execute(self, request: ActionRequest) -> ActionReceipt:
        self._call()
        return self.receipts.setdefault(
            request.idempotency_key,
            ActionReceipt(
                idempotency_key=request.idempotency_key,
                operation_id=f"op-{next(self._ops)}",
                status="succeeded",
                amount=request.amount,
                currency=request.currency,
            ),
        )

    async def lookup(self, idempotency_key: str) -> ActionReceipt | None:
        return self.receipts.get(idempotency_key)

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        self._call()
        self.reversed.append(idempotency_key)
        return f"rev-{operation_id}"


class Notifier(Failing):
    def __init__(self, *failures: Exception) -> None:
        super().__init__(*failures)
        self.sent: dict[str, dict[str, str]] = {}

    async def send(
        self, delivery_key: str, customer_id: str, template: str, fields: dict[str, str]
    ) -> Delivery:
        self._call()
        self.sent.setdefault(delivery_key, fields)
        return Delivery(delivery_key=delivery_key, notification_id="n-1", channel="email")


class Ledger(Failing):
    """The request workflow's effect ledger: one row per idempotency key. `lose_answer`: every
    execution times out after it happened (or, without `record`, before)."""

    def __init__(
        self, *failures: Exception, lose_answer: bool = False, record: bool = True
    ) -> None:
        super().__init__(*failures)
        self.rows: dict[str, EffectRequest] = {}
        self.reversed: dict[str, str] = {}
        self.lose_answer, self.record = lose_answer, record

    async def execute(self, request: EffectRequest) -> EffectReceipt:
        self._call()
        if self.record:
            self.rows.setdefault(request.idempotency_key, request)
        if self.lose_answer:
            raise ExternalTimeout("no answer")
        return self._receipt(request.idempotency_key)

    async def lookup(self, idempotency_key: str) -> EffectReceipt | None:
        return self._receipt(idempotency_key) if idempotency_key in self.rows else None

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        """Reverse once per key (a repeat returns the same id); a queued failure first."""
        self._call()
        return self.reversed.setdefault(idempotency_key, f"rev-{len(self.reversed) + 1}")

    def _receipt(self, key: str) -> EffectReceipt:
        row = self.rows[key]
        return EffectReceipt(
            idempotency_key=key, operation_id="op-1", workflow_id=row.workflow_id, effect=row.effect
        )
