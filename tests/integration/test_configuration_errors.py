"""One error path for the whole CLI: a bad setting, an unreachable server, a port in use is one
line naming the variable or resource and what to do, and exit status 2; `--debug` (or
INTERLOCK_LOG_LEVEL=debug) shows the trace."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from interlock.config.settings import Settings
from tests.support.cli import cli_env, free_port, one_line_refusal, run_cli

pytestmark = pytest.mark.timeout(120)

BAD_VALUES = {
    "nats_url": "http://broker:4222",
    "stream_replicas": "2",
    "database_url": "mysql://db/interlock",
    "home": "/dev/null/home",
    "secrets_dir": "/dev/null/secrets",
    "insecure_nats": "maybe",
    "clients": '{"crm": {"publish": ["request"]',
    "job_signing_key": "not a key",
    "job_public_key": "not a key",
    "log_level": "loud",
    "projector_workers": "0",
    "commit_batch": "0",
    "projector_partitions": "65",
    "stage_workers": "many",
    "relay_batch_size": "0",
    "publish_grace": "120",
    "stage_host": "sometimes",
    "projector_host": "sometimes",
    "event_loop": "trio",
    "archive_after": "-1",
    "forget_after": "soon",
    "history_retention": "-1",
    "retention_interval": "0",
    "stuck_after": "-5",
    "sweep_after": "x",
    "unknown_workflow_grace": "-1",
    "occurred_at_past_days": "0",
    "occurred_at_future_s": "-5",
    "shutdown_grace": "0",
    "model": "gpt",
    "models": '{"support": "gpt"}',
    "openai_base_url": "not a url",
    "openai_model": "",
    "openai_api_key": "",
    "model_timeout": "0",
    "external_timeout": "-1",
    "stage_redelivery_s": "0.01",
    "adapters": '{"request": "http"}',
    "parameters": '{"support": {"approval_sla_secs": 60}}',
    "local_traces": "perhaps",
    "gateway_host": "",
    "gateway_port": "99999",
    "gateway_senders": '{"tickets": {"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", '
    '"tenants": ["acme"], "actors": ["*"]}}',
    "gateway_sender_rate": "0",
    "gateway_unauthenticated_rate": "fast",
    "console_host": "",
    "console_port": "0",
    "console_operators": '{"victor": {"roles": ["approver"]}}',
    "console_redact": "body",
    "console_redrive": "maybe",
    "jaeger_url": "jaeger:16686",
    "gateway_claims_key": "not a key",
    "gateway_claims_public_key": "not a key",
    "slo_window": "0",
    "metrics_interval": "-1",
    "metrics_host": "",
    "metrics_port": "70000",
    "model_prices": '{"gpt": {"input_per_1m": "-1"}}',
}
"""A bad value for every setting; a new setting without one here fails the test below."""

EXPLAINED = {
    "parameters": "approval_sla_seconds",
    "gateway_senders": "roles",
    "console_operators": "password_hash",
}
"""What the message must mention beyond the variable's name: the valid key, the missing field."""


def _interlock(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cli_env(home, **env), *args, timeout=90)


def test_every_setting_has_a_bad_value_below() -> None:
    assert set(BAD_VALUES) == set(Settings.model_fields)


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_setting_is_one_line_naming_it_and_exit_2(name: str, tmp_path: Path) -> None:
    variable = f"INTERLOCK_{name.upper()}"
    line = one_line_refusal(_interlock(tmp_path / "home", "list", **{variable: BAD_VALUES[name]}))
    assert variable in line
    assert EXPLAINED.get(name, "") in line


@pytest.mark.parametrize(("only", "partitions"), [("projector.2", "2"), ("projector.0", "1")])
def test_a_projector_of_another_partition_layout_is_refused_by_up(
    only: str, partitions: str, tmp_path: Path
) -> None:
    line = one_line_refusal(
        _interlock(
            tmp_path / "home", "up", "--only", only, INTERLOCK_PROJECTOR_PARTITIONS=partitions
        )
    )
    assert f"{only} is not a projector of this stack" in line
    assert f"INTERLOCK_PROJECTOR_PARTITIONS={partitions}" in line


def test_partitions_named_beside_the_partition_host_are_refused_by_up(tmp_path: Path) -> None:
    line = one_line_refusal(
        _interlock(
            tmp_path / "home",
            *("up", "--only", "projectors", "--only", "projector.1"),
            INTERLOCK_PROJECTOR_PARTITIONS="2",
        )
    )
    assert "projectors runs every projector partition already" in line


def test_openai_without_its_settings_names_what_is_missing(tmp_path: Path) -> None:
    line = one_line_refusal(_interlock(tmp_path / "home", "list", INTERLOCK_MODEL="openai"))
    assert "INTERLOCK_OPENAI_BASE_URL" in line
    assert "INTERLOCK_OPENAI_MODEL" in line


def test_unreachable_servers_fail_after_a_bounded_deadline(
    tmp_path: Path, stack_urls: tuple[str, str]
) -> None:
    nats_url = f"nats://127.0.0.1:{free_port()}"
    database_url = f"postgresql://interlock@127.0.0.1:{free_port()}/interlock"
    for env, resource in (
        ({"INTERLOCK_NATS_URL": nats_url, "INTERLOCK_DATABASE_URL": stack_urls[1]}, "NATS"),
        (
            {"INTERLOCK_NATS_URL": stack_urls[0], "INTERLOCK_DATABASE_URL": database_url},
            "PostgreSQL",
        ),
    ):
        began = time.monotonic()
        line = one_line_refusal(_interlock(tmp_path / "home", "list", **env))
        assert time.monotonic() - began < 30
        assert resource in line
        assert "127.0.0.1" in line


def test_debug_shows_the_trace(tmp_path: Path, stack_urls: tuple[str, str]) -> None:
    database_url = f"postgresql://interlock@127.0.0.1:{free_port()}/interlock"
    for args, env in (
        (("--debug", "list"), {}),
        (("list",), {"INTERLOCK_LOG_LEVEL": "debug"}),
    ):
        result = _interlock(
            tmp_path / "home",
            *args,
            INTERLOCK_NATS_URL=stack_urls[0],
            INTERLOCK_DATABASE_URL=database_url,
            **env,
        )
        assert result.returncode == 2
        assert "Traceback" in result.stderr


@pytest.mark.parametrize("name", ["tickets-eu", "tickets eu", "x" * 65])
def test_a_gateway_sender_name_that_could_make_event_ids_collide_is_one_line(
    name: str, tmp_path: Path
) -> None:
    """`gw-<sender>-<webhook-id>` names one sender only if no name holds a `-`."""
    senders = (
        f'{{"{name}": {{"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", '
        '"roles": ["support_approver"], "tenants": ["acme"], "actors": ["*"]}}'
    )
    done = _interlock(tmp_path / "home", "list", INTERLOCK_GATEWAY_SENDERS=senders)

    line = one_line_refusal(done)
    assert "INTERLOCK_GATEWAY_SENDERS" in line
    assert "A-Za-z0-9_" in line
