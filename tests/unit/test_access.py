"""Who may do what on the broker, and the credentials in the URLs the components are given:
pure functions of the settings and the installed workflow types (what else each component
process is given: `test_component_environment`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.app.childenv import child_environment, settings_of
from interlock.config import access
from interlock.config.components import STAGE_HOST
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy
from interlock.contracts.urls import nats_servers, nats_user
from interlock.messaging.permissions import ADMIN, Permissions, stage_identity
from tests.support.subjects import allowed as allowed_by
from tests.support.workflows import STAGES

EXECUTE = stage_identity("support", "execute_action")


def _may_publish(allowed: Permissions, subject: str) -> bool:
    return allowed_by(allowed.publish, subject)


@pytest.fixture(autouse=True)
def _own_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials a test makes stay in its own directory."""
    monkeypatch.setenv("INTERLOCK_SECRETS_DIR", str(tmp_path / "secrets"))


@pytest.fixture(scope="module")
def permissions() -> dict[str, Permissions]:
    return access.broker_permissions(Settings())


@pytest.mark.parametrize(
    ("subject", "only"),
    [
        # Outbox rows: the projector publishes them after its commit, the relay as backstop.
        (subjects.job("support", "execute_action"), {"projector", "relay"}),
        (subjects.out("support", "completed"), {"projector", "relay"}),
        (subjects.timer("support"), {"timer"}),
        (
            subjects.result("support", "execute_action"),
            {stage_identity("support", "execute_action"), STAGE_HOST},
        ),
        (subjects.request("support", "upstream"), {"upstream"}),
        (subjects.signal("support", "approvals"), {"approvals"}),
        (subjects.signal("request", "gateway"), {"gateway"}),
        ("$JS.API.STREAM.DELETE.WF_IN", set()),
        ("$JS.API.CONSUMER.CREATE.WF_JOBS", set()),
    ],
)
def test_only_its_owner_may_publish_on_a_subject(
    permissions: dict[str, Permissions], subject: str, only: set[str]
) -> None:
    publishers = {name for name, p in permissions.items() if _may_publish(p, subject)}
    assert publishers - {ADMIN} == only


def test_every_identity_subscribes_to_its_own_inbox_only(
    permissions: dict[str, Permissions],
) -> None:
    for name, allowed in permissions.items():
        inboxes = [s for s in allowed.subscribe if s.startswith("_INBOX")]
        if name not in (ADMIN, "sim"):
            assert inboxes == [f"{subjects.inbox_prefix(name)}.>"], name


def test_every_stage_has_an_identity(permissions: dict[str, Permissions]) -> None:
    assert {stage_identity(t, s) for t, s in STAGES} <= set(permissions)


def test_the_stage_host_may_do_what_its_stages_may_and_nothing_more(
    permissions: dict[str, Permissions],
) -> None:
    stages = [p for name, p in permissions.items() if name.startswith("stage-")]
    host = permissions[STAGE_HOST]
    assert len(stages) >= len(STAGES)  # every installed type's, the plugins' too

    assert set(host.publish) == {subject for stage in stages for subject in stage.publish}
    assert host.subscribe == (f"{subjects.inbox_prefix(STAGE_HOST)}.>",)
    assert not _may_publish(host, subjects.job("support", "execute_action"))
    assert not _may_publish(host, subjects.request("support", "upstream"))


def test_the_stage_host_is_given_what_its_stages_are() -> None:
    host = child_environment(Settings(), STAGE_HOST, "nats://x:y@h:1", None)
    stage = child_environment(Settings(), "support.execute_action", "nats://x:y@h:1", None)

    assert "INTERLOCK_JOB_SIGNING_KEY" not in host
    assert host["INTERLOCK_JOB_PUBLIC_KEY"] == stage["INTERLOCK_JOB_PUBLIC_KEY"]
    assert set(settings_of("support.execute_action")) <= set(settings_of(STAGE_HOST))
    assert "INTERLOCK_DATABASE_URL" not in host


def test_the_console_reads_dead_letters_and_redrives_them_only_when_allowed() -> None:
    dlq = subjects.STREAM_DLQ
    delete = f"$JS.API.STREAM.MSG.DELETE.{dlq}"
    forged = [subjects.request("support", "upstream"), subjects.job("support", "classify")]
    read_only = access.broker_permissions(Settings())[access.CONSOLE]
    redriving = access.broker_permissions(Settings(console_redrive=True))[access.CONSOLE]

    assert access.nats_identity(access.CONSOLE) == "console"
    for allowed in (read_only, redriving):
        assert _may_publish(allowed, f"$JS.API.STREAM.MSG.GET.{dlq}")
        assert not _may_publish(allowed, f"$JS.API.STREAM.DELETE.{dlq}")
    # Its signals go out as the CLI's client `operator`, never as itself.
    forged.append(subjects.signal("support", "operator"))
    assert not any(_may_publish(read_only, s) for s in [delete, *forged])
    assert all(_may_publish(redriving, s) for s in [delete, *forged])


def test_the_default_clients_request_and_approve_with_every_approver_role() -> None:
    clients = access.client_policies(Settings())

    assert clients["upstream"].publish == {"request"}
    assert clients["approvals"].publish == {"signal"}
    assert {"support_approver", "support_supervisor", "request_approver", "operator"} <= set(
        clients["approvals"].roles
    )
    assert clients["operator"].roles == clients["approvals"].roles
    assert clients["approvals"].admits_tenant("any-tenant")
    assert clients["approvals"].admits_type("support")


def test_configured_clients_replace_the_defaults_and_keep_the_operator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configured = {"crm": {"publish": ["request"], "types": ["support"], "tenants": ["acme"]}}
    monkeypatch.setenv("INTERLOCK_CLIENTS", json.dumps(configured))
    clients = access.client_policies(Settings())

    assert set(clients) == {"crm", "operator", "gateway"}
    assert clients["crm"] == ClientPolicy.model_validate(configured["crm"])
    assert not clients["crm"].admits_tenant("globex")
    permissions = access.broker_permissions(Settings())
    assert _may_publish(permissions["crm"], subjects.request("support", "crm"))
    assert not _may_publish(permissions["crm"], subjects.request("request", "crm"))


def test_a_client_name_must_be_a_subject_token(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {"a.b": {"publish": ["request"], "types": ["*"], "tenants": ["*"]}}
    monkeypatch.setenv("INTERLOCK_CLIENTS", json.dumps(bad))
    with pytest.raises(ValueError, match="clients"):
        Settings()


def test_credentials_go_into_urls_and_out_of_what_is_printed() -> None:
    url = access.with_credentials("postgresql://h:5432/db", "interlock_relay", "s3cr3t")

    assert url == "postgresql://interlock_relay:s3cr3t@h:5432/db"
    assert access.redacted(url) == "postgresql://interlock_relay@h:5432/db"
    assert access.without_credentials(url) == "postgresql://h:5432/db"


SEEDS = "nats://a:4222,nats://b:4222, nats://c:4222"


def test_every_seed_of_a_cluster_url_carries_the_credentials_and_none_is_printed() -> None:
    url = access.with_credentials(SEEDS, "relay", "s3cr,t")

    assert nats_servers(url) == [f"nats://relay:s3cr%2Ct@{h}:4222" for h in "abc"]
    assert nats_user(url) == "relay"
    assert access.redacted(url) == "nats://relay@a:4222,nats://relay@b:4222,nats://relay@c:4222"
    assert access.without_credentials(url) == "nats://a:4222,nats://b:4222,nats://c:4222"
    assert access.nats_url_as(url, "timer", Secrets(Path("/nonexistent"))) == url


def test_a_postgres_multi_host_url_keeps_its_own_commas() -> None:
    url = access.with_credentials("postgresql://h1:5432,h2:5432/db", "interlock_relay", "p")

    assert url == "postgresql://interlock_relay:p@h1:5432,h2:5432/db"


def test_a_cluster_url_is_accepted_seed_by_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_NATS_URL", SEEDS)
    assert Settings().nats_url == SEEDS
    for bad in ("nats://a:4222,http://b:4222", "nats://a:4222,ws://b:8080"):
        monkeypatch.setenv("INTERLOCK_NATS_URL", bad)
        with pytest.raises(ValueError, match="INTERLOCK_NATS_URL"):
            Settings()


def test_the_gateway_policy_carries_each_senders_own_grant_and_no_secret() -> None:
    """The projector checks a gateway signal against its one sender's grant, so the policy
    the projector is given names every sender's tenants, roles and actors, never a secret."""
    secret = "whsec_" + "A" * 43 + "="
    senders = {
        "tickets": {"secret": secret, "roles": ["support_approver"], "tenants": ["acme"],
                    "actors": ["alice"]},
        "ops": {"secret": secret, "roles": ["operator"], "tenants": ["*"], "actors": ["*"]},
    }  # fmt: skip
    settings = Settings.model_validate({"gateway_senders": senders})

    gateway = access.client_policies(settings)["gateway"]

    assert gateway.senders is not None
    assert gateway.senders["tickets"].tenants == frozenset({"acme"})
    assert gateway.senders["tickets"].actors == frozenset({"alice"})
    assert "secret" not in gateway.model_dump_json()
    assert gateway.tenants == frozenset({"*"})  # what the broker lets it publish: the union


def test_a_gateway_sender_name_with_a_dash_is_a_configuration_error() -> None:
    """`gw-<sender>-<webhook-id>` must name one sender: `a` and `a-b` would collide."""
    secret = "whsec_" + "A" * 43 + "="
    sender = {"secret": secret, "roles": [], "tenants": ["acme"], "actors": ["*"]}

    with pytest.raises(ValueError, match="gateway_senders"):
        Settings.model_validate({"gateway_senders": {"tickets-eu": sender}})
