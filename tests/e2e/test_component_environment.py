"""What each component process is given, read from the running processes themselves: its own
credentials and settings, never the administrator's, another component's or a secret it does
not use."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psutil
import pytest
from pydantic import SecretStr

from interlock.app.bootstrap import supervised
from interlock.config.settings import GatewaySender, Settings
from interlock.contracts.urls import nats_user

pytestmark = pytest.mark.timeout(120)
OPENAI_KEY = "sk-test-openai-key-0123456789"
WEBHOOK_SECRET = "whsec_dGVzdC1nYXRld2F5LXNlY3JldC0wMTIzNDU2Nzg5"
UNRELATED = "an-unrelated-deploy-token"


@pytest.fixture(scope="module")
async def environments(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> AsyncIterator[dict[str, dict[str, str]]]:
    settings = e2e_settings.model_copy(
        update={
            "model": "rules",
            "openai_api_key": SecretStr(OPENAI_KEY),
            "gateway_senders": {
                "tickets": GatewaySender(
                    secret=SecretStr(WEBHOOK_SECRET),
                    roles=frozenset({"support_approver"}),
                    tenants=frozenset({"acme"}),
                    actors=frozenset({"*"}),
                )
            },
        }
    )
    names = ["relay", "support.classify", "support.execute_action"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEPLOY_TOKEN", UNRELATED)
        async with supervised(settings, module_nats, module_database, names) as supervisor:
            yield {name: psutil.Process(pid).environ() for name, pid in supervisor.pids().items()}


def _values(env: dict[str, str]) -> str:
    return "\n".join(env.values())


def test_a_stage_gets_no_database_url_and_no_secret_it_does_not_use(
    environments: dict[str, dict[str, str]], module_database: str
) -> None:
    env = environments["support.execute_action"]

    assert "INTERLOCK_DATABASE_URL" not in env
    assert "INTERLOCK_JOB_SIGNING_KEY" not in env
    assert "PUBLIC KEY" in env["INTERLOCK_JOB_PUBLIC_KEY"]
    assert nats_user(env["INTERLOCK_NATS_URL"]) == "stage-support-execute_action"
    for secret in (OPENAI_KEY, WEBHOOK_SECRET, UNRELATED, module_database):
        assert secret not in _values(env)


def test_only_a_stage_that_asks_a_model_gets_the_model_key(
    environments: dict[str, dict[str, str]],
) -> None:
    assert environments["support.classify"]["INTERLOCK_OPENAI_API_KEY"] == OPENAI_KEY
    assert "INTERLOCK_DATABASE_URL" not in environments["support.classify"]


def test_the_relay_connects_as_its_own_role_and_identity(
    environments: dict[str, dict[str, str]], module_database: str, module_nats: str
) -> None:
    env = environments["relay"]

    assert env["INTERLOCK_DATABASE_URL"].startswith("postgresql://interlock_relay:")
    assert "INTERLOCK_JOB_SIGNING_KEY" not in env
    assert nats_user(env["INTERLOCK_NATS_URL"]) == "relay"
    for secret in (OPENAI_KEY, WEBHOOK_SECRET, UNRELATED, module_database, module_nats):
        assert secret not in _values(env)
