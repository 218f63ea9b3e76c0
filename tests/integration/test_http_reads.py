"""`HttpReader` against a real HTTP service with injected faults: a typed answer, and every
failure a transient or permanent error — a read has no unknown outcome — which a stage's
`call` turns into `RETRYABLE_ERROR` or `PERMANENT_ERROR`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest

from interlock.adapters.http import HttpReadConfig, HttpReader
from interlock.contracts.errors import ConfigurationError
from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.services.runtime.calls import call
from interlock.services.runtime.stage import StageResult
from interlock.workflows.support.systems import AccountSnapshot
from tests.support.http_service import Fault, LedgerService

PATHS = {"inspect": "accounts/{customer_id}"}


@pytest.fixture
async def service() -> AsyncIterator[LedgerService]:
    async with LedgerService() as running:
        yield running


def reader_of(service: LedgerService, *, timeout_s: float = 5.0) -> HttpReader:
    return HttpReader(
        HttpReadConfig(
            base_url=service.base_url,
            timeout_s=timeout_s,
            paths=PATHS,
            headers={"Accept": "application/json"},
        )
    )


@pytest.fixture
async def reader(service: LedgerService) -> AsyncIterator[HttpReader]:
    async with aclosing(reader_of(service)) as adapter:
        yield adapter


async def inspect(reader: HttpReader, customer_id: str = "cus-1") -> AccountSnapshot:
    return await reader.get(
        "inspect",
        AccountSnapshot,
        path_params={"customer_id": customer_id},
        query={"currency": "USD", "unused": None},
    )


async def test_a_get_fills_the_path_encodes_its_values_and_answers_the_typed_model(
    service: LedgerService, reader: HttpReader
) -> None:
    account = await inspect(reader, "cus/42 ü")

    assert account == AccountSnapshot(
        account_ref="acct-cus/42 ü", customer_id="cus/42 ü", status="active", currency="USD"
    )
    [get] = service.calls
    assert (get.method, get.path, get.query) == (
        "GET",
        "/v1/accounts/cus/42 ü",
        {"currency": "USD"},
    )
    assert get.headers["Accept"] == "application/json"


@pytest.mark.parametrize(
    ("fault", "error", "error_class"),
    [
        (Fault(status=500), ExternalUnavailable, "account_api_unavailable"),
        (Fault(drop=True), ExternalUnavailable, "account_api_unavailable"),
        (Fault(body=b"<html>not json</html>"), ExternalUnavailable, "account_api_unavailable"),
        (Fault(body=b'{"customer_id": "cus-1"}'), ExternalUnavailable, "account_api_unavailable"),
        (Fault(status=404), ExternalRejected, "http_404"),
        (Fault(status=403), ExternalRejected, "http_403"),
        (Fault(status=301, headers={"Location": "/elsewhere"}), ExternalRejected, "http_301"),
    ],
    ids=["500", "reset", "garbage", "schema-mismatch", "404", "403", "redirect"],
)
async def test_a_failed_read_is_transient_or_permanent_never_unknown(
    service: LedgerService,
    reader: HttpReader,
    fault: Fault,
    error: type[Exception],
    error_class: str,
) -> None:
    service.inject(fault, fault, method="GET")

    with pytest.raises(error) as raised:
        await inspect(reader)
    result = await call(inspect(reader), "account_api")

    assert not isinstance(raised.value, ExternalTimeout)
    assert isinstance(result, StageResult)
    assert result.payload["error_class"] == error_class
    expected = "PERMANENT_ERROR" if error is ExternalRejected else "RETRYABLE_ERROR"
    assert result.event_type == expected


@pytest.mark.parametrize(("status", "header"), [(429, "3"), (503, "0"), (408, None)])
async def test_throttling_is_unavailable_with_the_servers_retry_after(
    service: LedgerService, reader: HttpReader, status: int, header: str | None
) -> None:
    headers = {"Retry-After": header} if header is not None else {}
    service.inject(Fault(status=status, headers=headers), method="GET")

    with pytest.raises(ExternalUnavailable) as raised:
        await inspect(reader)

    assert raised.value.retry_after == (float(header) if header is not None else None)
    assert (await inspect(reader)).customer_id == "cus-1"  # the retry succeeds


async def test_a_slow_answer_is_a_timeout(service: LedgerService) -> None:
    service.inject(Fault(stall=True), method="GET")
    async with aclosing(reader_of(service, timeout_s=0.3)) as impatient:
        with pytest.raises(ExternalTimeout, match=r"GET 127\.0\.0\.1:\d+ accounts/\{customer_id\}"):
            await inspect(impatient)
        result = await call(inspect(impatient), "account_api")

    assert result == AccountSnapshot(
        account_ref="acct-cus-1", customer_id="cus-1", status="active", currency="USD"
    )


async def test_an_operation_without_a_path_or_a_value_is_a_configuration_error(
    service: LedgerService, reader: HttpReader
) -> None:
    with pytest.raises(ConfigurationError, match="'policy'"):
        await reader.get("policy", AccountSnapshot)
    with pytest.raises(ConfigurationError, match="customer_id"):
        await reader.get("inspect", AccountSnapshot, path_params={"id": "cus-1"})
    assert service.calls == []
