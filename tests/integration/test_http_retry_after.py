"""A service's `Retry-After` (429/503) sets how long the durable retry waits, never a sleep in
the handler: a job that fails waits in the broker before its redelivery, a stage that reports
`RETRYABLE_ERROR` carries the wait for the workflow's retry timer (its policy caps it). At
least what the service asked for, at most the cap; without one, the usual growing backoff."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email.utils import format_datetime

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from interlock.adapters.http import HttpEffectConfig, HttpEffects
from interlock.contracts.payloads import ErrorReport
from interlock.errors import ExternalUnavailable
from interlock.messaging.deadletter import MAX_REDELIVERY_DELAY
from interlock.services.effects import execute_once
from interlock.services.runtime.calls import transient
from interlock.services.runtime.stage import nak_delay
from interlock.workflows.support.systems import ActionReceipt, ActionRequest
from tests.support.http_service import Fault, LedgerService

KEY = "support-action:wf-ra:v1"
Provider = HttpEffects[ActionRequest, ActionReceipt]


def delivery(n: int) -> Msg:
    """A JetStream message on its `n`-th delivery (the broker says so in its reply subject)."""
    return Msg(Client(), subject="wf.job.t.s", reply=f"$JS.ACK.JOBS.c.{n}.7.7.1700000000000.0")


@pytest.fixture
async def served() -> AsyncIterator[tuple[LedgerService, Provider]]:
    async with LedgerService() as service:
        config = HttpEffectConfig(base_url=service.base_url, connect_timeout_s=2.0)
        async with aclosing(Provider(config, ActionReceipt)) as provider:
            yield service, provider


async def refused_with(served: tuple[LedgerService, Provider], fault: Fault) -> Exception:
    service, provider = served
    service.inject(fault)
    request = ActionRequest(
        idempotency_key=KEY,
        action_type="refund",
        customer_id="cus-1",
        amount=Decimal("1.00"),
        currency="EUR",
    )
    with pytest.raises(ExternalUnavailable) as raised:
        await execute_once(provider, KEY, request)
    assert service.ledger == {}
    return raised.value


async def test_a_429_retry_after_in_seconds_delays_the_redelivery(
    served: tuple[LedgerService, Provider],
) -> None:
    exc = await refused_with(served, Fault(perform=False, status=429, headers={"Retry-After": "7"}))

    assert nak_delay(exc, delivery(1)) == 7.0
    assert nak_delay(exc, delivery(4)) == 8.0  # the backoff has grown past what was asked


async def test_a_503_retry_after_as_a_date_delays_the_redelivery(
    served: tuple[LedgerService, Provider],
) -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    exc = await refused_with(
        served, Fault(perform=False, status=503, headers={"Retry-After": later})
    )

    assert 20 < nak_delay(exc, delivery(1)) <= 30


async def test_a_retry_after_beyond_the_cap_waits_the_cap(
    served: tuple[LedgerService, Provider],
) -> None:
    exc = await refused_with(
        served, Fault(perform=False, status=429, headers={"Retry-After": "86400"})
    )

    assert nak_delay(exc, delivery(1)) == MAX_REDELIVERY_DELAY


async def test_without_retry_after_the_backoff_grows_per_delivery(
    served: tuple[LedgerService, Provider],
) -> None:
    exc = await refused_with(served, Fault(perform=False, status=503))

    assert [nak_delay(exc, delivery(n)) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]


async def test_a_retryable_error_report_carries_the_wait_for_the_retry_timer(
    served: tuple[LedgerService, Provider],
) -> None:
    exc = await refused_with(served, Fault(perform=False, status=429, headers={"Retry-After": "7"}))

    result = transient(exc, "refunds")

    assert result.event_type == "RETRYABLE_ERROR"
    report = ErrorReport.model_validate(result.payload)
    assert (report.error_class, report.retry_after_s) == ("refunds_unavailable", 7.0)
