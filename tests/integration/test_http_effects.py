"""`HttpEffects` under `execute_once` against a real HTTP service with injected faults.

Each test is one intent: `execute_once`, and, after a transient failure, the retry the stage
does (a redelivery of the same job, so the same key). The service keeps its own ledger by
`Idempotency-Key`; every test asserts exactly one effect per intent (none for a refused one),
that no retry ever leaned on the service's deduplication (`replays`), and the order of the
calls: after an unknown outcome the key is looked up before anything is sent again.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email.utils import format_datetime

import pytest

from interlock.adapters.http import HttpEffectConfig, HttpEffects, SecretRef
from interlock.contracts.errors import TransientError
from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable, OutcomeUnknown
from interlock.services.effects import execute_once
from interlock.workflows.support.systems import ActionReceipt, ActionRequest
from tests.support.cli import free_port
from tests.support.http_service import Fault, LedgerService

KEY = "support-action:wf-1:v1"
TOKEN = "tok-7c1e-never-print-me"
CUSTOMER = "cus-private-4711"
ENV = {"INTERLOCK_TEST_REFUNDS_TOKEN": TOKEN}

Provider = HttpEffects[ActionRequest, ActionReceipt]
Outcome = tuple[ActionReceipt, bool] | Exception


def refund(key: str = KEY) -> ActionRequest:
    return ActionRequest(
        idempotency_key=key,
        action_type="refund",
        customer_id=CUSTOMER,
        amount=Decimal("12.50"),
        currency="EUR",
    )


def config(base_url: str, *, timeout_s: float = 5.0) -> HttpEffectConfig:
    return HttpEffectConfig(
        base_url=base_url,
        timeout_s=timeout_s,
        connect_timeout_s=2.0,
        headers={"Authorization": SecretRef(env="INTERLOCK_TEST_REFUNDS_TOKEN", prefix="Bearer ")},
    )


@pytest.fixture
async def service() -> AsyncIterator[LedgerService]:
    async with LedgerService() as running:
        yield running


@pytest.fixture
async def provider(service: LedgerService) -> AsyncIterator[Provider]:
    async with aclosing(
        HttpEffects[ActionRequest, ActionReceipt](
            config(service.base_url), ActionReceipt, environ=ENV
        )
    ) as adapter:
        yield adapter


async def intend(provider: Provider, request: ActionRequest) -> list[Outcome]:
    """One intent: `execute_once`, then — after a transient failure only — the stage's retry
    under the same key. What each attempt gave, in order."""
    outcomes: list[Outcome] = []
    for _ in range(2):
        try:
            outcomes.append(await execute_once(provider, request.idempotency_key, request))
        except Exception as exc:
            outcomes.append(exc)
            if isinstance(exc, TransientError):
                continue
        break
    return outcomes


def assert_one_effect(service: LedgerService) -> ActionReceipt:
    assert list(service.ledger) == [KEY]
    assert service.replays == []
    return ActionReceipt.model_validate(service.ledger[KEY])


async def test_a_clean_call_posts_once_with_the_key_and_the_secret_header(
    service: LedgerService, provider: Provider
) -> None:
    [outcome] = await intend(provider, refund())

    assert outcome == (assert_one_effect(service), False)
    assert service.trail() == [("GET", KEY), ("POST", KEY)]
    post = service.calls[1]
    assert post.headers["Idempotency-Key"] == KEY
    assert post.headers["Authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize(
    "fault",
    [
        Fault(drop=True),
        Fault(status=500),
        Fault(status=504),
        Fault(status=409),
        Fault(status=200, body=b"<html>upstream hiccup</html>"),
        Fault(status=201, body=b'{"idempotency_key": "support-action:wf-1:v1"}'),
    ],
    ids=["response-lost", "500", "504", "409-in-progress", "garbled-receipt", "partial-receipt"],
)
async def test_an_unknown_outcome_after_the_effect_is_reconciled_by_lookup_not_resent(
    service: LedgerService, provider: Provider, fault: Fault
) -> None:
    service.inject(fault)

    [outcome] = await intend(provider, refund())

    assert outcome == (assert_one_effect(service), True)
    assert service.trail() == [("GET", KEY), ("POST", KEY), ("GET", KEY)]


async def test_a_slow_response_after_the_effect_times_out_and_is_reconciled(
    service: LedgerService,
) -> None:
    service.inject(Fault(stall=True))
    async with aclosing(
        HttpEffects[ActionRequest, ActionReceipt](
            config(service.base_url, timeout_s=0.5), ActionReceipt, environ=ENV
        )
    ) as impatient:
        [outcome] = await intend(impatient, refund())

    assert outcome == (assert_one_effect(service), True)
    assert service.trail() == [("GET", KEY), ("POST", KEY), ("GET", KEY)]


@pytest.mark.parametrize(
    "fault",
    [
        Fault(perform=False, status=500),
        Fault(perform=False, status=502),
        Fault(perform=False, drop=True),
    ],
    ids=["500", "502", "reset"],
)
async def test_a_failure_before_the_effect_is_unknown_then_the_retry_performs_it_once(
    service: LedgerService, provider: Provider, fault: Fault
) -> None:
    service.inject(fault)

    first, second = await intend(provider, refund())

    assert isinstance(first, OutcomeUnknown)
    assert second == (assert_one_effect(service), False)
    assert service.trail() == [
        ("GET", KEY), ("POST", KEY), ("GET", KEY),  # unknown: looked up, nothing found
        ("GET", KEY), ("POST", KEY),  # the stage's retry looks up again, then acts
    ]  # fmt: skip


async def test_429_is_unavailable_with_the_servers_retry_after_and_nothing_is_looked_up(
    service: LedgerService, provider: Provider
) -> None:
    service.inject(Fault(perform=False, status=429, headers={"Retry-After": "7"}))

    first, second = await intend(provider, refund())

    assert isinstance(first, ExternalUnavailable)
    assert not isinstance(first, ExternalTimeout)
    assert first.retry_after == 7.0
    assert second == (assert_one_effect(service), False)
    assert service.trail() == [("GET", KEY), ("POST", KEY), ("GET", KEY), ("POST", KEY)]


async def test_503_carries_a_retry_after_given_as_an_http_date(
    service: LedgerService, provider: Provider
) -> None:
    later = datetime.now(UTC) + timedelta(seconds=120)
    service.inject(
        Fault(perform=False, status=503, headers={"Retry-After": format_datetime(later, True)})
    )

    first, second = await intend(provider, refund())

    assert isinstance(first, ExternalUnavailable)
    assert first.retry_after is not None
    assert 100 < first.retry_after <= 120
    assert second == (assert_one_effect(service), False)


async def test_a_4xx_is_permanent_with_the_status_as_error_class_and_not_retried(
    service: LedgerService, provider: Provider
) -> None:
    service.inject(Fault(perform=False, status=422))

    [outcome] = await intend(provider, refund())

    assert isinstance(outcome, ExternalRejected)
    assert outcome.error_class == "http_422"
    assert service.ledger == {}
    assert service.trail() == [("GET", KEY), ("POST", KEY)]


async def test_a_malformed_lookup_answer_is_transient_and_the_retry_reconciles(
    service: LedgerService, provider: Provider
) -> None:
    service.inject(Fault(status=500))
    # The first lookup is clean (nothing yet); the one after the 500 reads garbage.
    service.inject(Fault(), Fault(body=b"{not json"), method="GET")

    first, second = await intend(provider, refund())

    assert isinstance(first, ExternalUnavailable)
    assert second == (assert_one_effect(service), True)


@pytest.mark.parametrize(
    "base_url",
    [f"http://127.0.0.1:{free_port()}/v1/", "http://interlock-adapter-test.invalid/v1/"],
    ids=["connection-refused", "dns-failure"],
)
async def test_a_service_that_cannot_be_reached_is_unavailable_and_nothing_was_sent(
    base_url: str,
) -> None:
    async with aclosing(
        HttpEffects[ActionRequest, ActionReceipt](config(base_url), ActionReceipt, environ=ENV)
    ) as unreachable:
        with pytest.raises(ExternalUnavailable, match="not sent"):
            await unreachable.execute(refund())
        with pytest.raises(ExternalUnavailable, match="not sent"):
            await execute_once(unreachable, KEY, refund())


async def test_no_secret_or_body_value_reaches_an_error_a_log_or_a_repr(
    service: LedgerService, provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    service.inject(
        Fault(perform=False, status=422, body=f'{{"detail": "{CUSTOMER}"}}'.encode()),
        Fault(perform=False, status=500),
        Fault(perform=False, status=429),
        Fault(status=200, body=b'{"amount": "12.50"'),
    )

    outcomes = [await intend(provider, refund(f"{KEY}:{n}")) for n in range(4)]

    errors = [o for attempts in outcomes for o in attempts if isinstance(o, Exception)]
    assert len(errors) == 3
    shown = caplog.text + repr(provider) + repr(provider.config)
    shown += "".join("".join(traceback.format_exception(e)) + repr(e) for e in errors)
    for secret in (TOKEN, CUSTOMER, "12.50"):
        assert secret not in shown
