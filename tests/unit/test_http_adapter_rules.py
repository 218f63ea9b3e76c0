"""What the HTTP adapters decide without a network: which error an answer means, how long a
`Retry-After` asks to wait, and which configurations are refused (never echoing a secret)."""

from __future__ import annotations

from contextlib import aclosing
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from interlock.adapters.http import HttpEffectConfig, HttpEffects, HttpReadConfig, SecretRef
from interlock.contracts.errors import ConfigurationError
from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.services.adapters.http import retry_after, status_error
from interlock.services.ports import EffectProvider, EffectReceipt, EffectRequest

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)

# --- answers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "write", "expected"),
    [
        (200, True, None),
        (201, True, None),
        (204, False, None),
        (429, True, ExternalUnavailable),
        (503, True, ExternalUnavailable),
        (408, True, ExternalUnavailable),
        (500, True, ExternalTimeout),
        (502, True, ExternalTimeout),
        (504, True, ExternalTimeout),
        (409, True, ExternalTimeout),
        (303, True, ExternalTimeout),
        (500, False, ExternalUnavailable),
        (429, False, ExternalUnavailable),
        (400, True, ExternalRejected),
        (422, True, ExternalRejected),
        (409, False, ExternalRejected),
        (404, False, ExternalRejected),
        (301, False, ExternalRejected),
    ],
)
def test_each_status_means_one_error(status: int, write: bool, expected: type | None) -> None:
    error = status_error(httpx.Response(status), "POST svc operations", write=write)

    if expected is None:
        assert error is None
    else:
        assert type(error) is expected
        assert f"HTTP {status}" in str(error)


def test_a_refusal_names_its_status_as_error_class() -> None:
    error = status_error(httpx.Response(422), "POST svc operations", write=True)

    assert isinstance(error, ExternalRejected)
    assert error.error_class == "http_422"


def test_an_unknown_write_tells_the_reader_to_reconcile() -> None:
    error = status_error(httpx.Response(500), "POST svc operations (key k-1)", write=True)

    assert "look the key up before any retry" in str(error)


def test_throttling_carries_the_retry_after() -> None:
    error = status_error(
        httpx.Response(429, headers={"Retry-After": "30"}), "GET svc x", write=False
    )

    assert isinstance(error, ExternalUnavailable)
    assert error.retry_after == 30.0


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 5 ", 5.0),
        ("0", 0.0),
        ("Sun, 01 Mar 2026 12:01:30 GMT", 90.0),
        ("Sun, 01 Mar 2026 11:00:00 GMT", 0.0),
        ("-5", None),
        ("soon", None),
        ("", None),
    ],
)
def test_retry_after_reads_seconds_or_an_http_date(header: str, seconds: float | None) -> None:
    assert retry_after({"retry-after": header}, now=NOW) == seconds


def test_no_retry_after_header_is_none() -> None:
    assert retry_after(httpx.Headers({}), now=NOW) is None


# --- configuration --------------------------------------------------------------------------


def test_a_port_binds_an_adapter_by_plain_configuration() -> None:
    config = HttpEffectConfig.model_validate(
        {
            "adapter": "http",
            "base_url": "https://refunds.example.com:8443/v1/",
            "headers": {"Authorization": {"env": "REFUNDS_TOKEN", "prefix": "Bearer "}},
        }
    )

    assert config.host == "refunds.example.com:8443"
    assert (config.execute_path, config.lookup_path) == ("operations", "operations/{key}")
    assert config.resolved_headers({"REFUNDS_TOKEN": "t-1"}) == {"Authorization": "Bearer t-1"}


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"base_url": "ftp://files.example.com/"}, "http(s)://"),
        ({"base_url": "https://user:hunter2@refunds.example.com/"}, "may not carry credentials"),
        ({"base_url": "https://refunds.example.com/?token=hunter2"}, "query"),
        ({"headers": {"Authorization": "Bearer hunter2"}}, "give a SecretRef"),
        ({"headers": {"X-Api-Key": "hunter2"}}, "give a SecretRef"),
        ({"headers": {"Idempotency-Key": "k"}}, "set by the adapter"),
        ({"lookup_path": "operations/{id}"}, "{key}"),
        ({"lookup_path": "operations"}, "{key}"),
        ({"execute_path": "operations/{key}"}, "no placeholders"),
        ({"timeout_s": 0}, "greater than 0"),
    ],
)
def test_an_unsafe_or_unusable_effect_configuration_is_refused_without_echoing_it(
    changes: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        HttpEffectConfig.model_validate({"base_url": "https://refunds.example.com/"} | changes)

    assert problem in str(raised.value)
    assert "hunter2" not in str(raised.value)


def test_a_read_path_placeholder_must_be_a_name() -> None:
    with pytest.raises(ValidationError, match="not a name"):
        HttpReadConfig(base_url="http://h/", paths={"inspect": "accounts/{}"})


def test_a_secret_reference_names_exactly_one_source() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        SecretRef()
    with pytest.raises(ValidationError, match="exactly one"):
        SecretRef(env="A", file=Path("/run/secrets/a"))


def test_a_secret_is_read_from_the_environment_or_a_file(tmp_path: Path) -> None:
    secret_file = tmp_path / "token"
    secret_file.write_text("from-file\n")
    config = HttpEffectConfig(
        base_url="http://h/",
        headers={
            "Authorization": SecretRef(env="TOKEN", prefix="Bearer "),
            "X-Api-Key": SecretRef(file=secret_file),
            "Accept": "application/json",
        },
    )

    assert config.resolved_headers({"TOKEN": "from-env"}) == {
        "Authorization": "Bearer from-env",
        "X-Api-Key": "from-file",
        "Accept": "application/json",
    }
    assert "from-env" not in repr(config)


def test_a_missing_secret_names_its_source_and_nothing_else(tmp_path: Path) -> None:
    by_env = HttpEffectConfig(base_url="http://h/", headers={"Authorization": SecretRef(env="T")})
    by_file = HttpEffectConfig(
        base_url="http://h/", headers={"X-Api-Key": SecretRef(file=tmp_path / "absent")}
    )

    with pytest.raises(ConfigurationError, match="environment variable T is not set"):
        by_env.resolved_headers({})
    with pytest.raises(ConfigurationError, match="absent cannot be read"):
        by_file.resolved_headers({})
    (tmp_path / "empty").write_text("\n")
    empty = HttpEffectConfig(
        base_url="http://h/", headers={"X-Api-Key": SecretRef(file=tmp_path / "empty")}
    )
    with pytest.raises(ConfigurationError, match="empty is empty"):
        empty.resolved_headers({})


async def test_an_effect_adapter_serves_the_effect_port_and_shows_only_its_host() -> None:
    config = HttpEffectConfig(
        base_url="http://effects.internal:8080/v1/",
        headers={"Authorization": SecretRef(env="TOKEN")},
    )
    async with aclosing(
        HttpEffects[EffectRequest, EffectReceipt](
            config, EffectReceipt, environ={"TOKEN": "hunter2"}
        )
    ) as adapter:
        port: EffectProvider = adapter

        assert repr(port) == "HttpEffects(host='effects.internal:8080')"
