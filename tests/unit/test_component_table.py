"""The table of components is the one place a component is spelled: the supervisor's lists,
the database roles and grants, the broker's identities and each child's environment are all
its rows, no more and no fewer, and a new component is one new row."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlock.app import composition, health, run_relay, runners
from interlock.app.bootstrap import environments
from interlock.app.childenv import GIVEN
from interlock.app.supervisor import Supervisor
from interlock.config import access, components
from interlock.config.components import Component, Scope, rows, settings_of
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.messaging.permissions import ADMIN, Permissions
from interlock.projector.store.roles import RoleAccess

NATS = "nats://admin:pw@127.0.0.1:4222"
DATABASE = "postgresql://admin:pw@127.0.0.1:5432/interlock"

LEDGER = Component(
    "ledger",
    "extra",
    "interlock.app.run_relay:run_timer",
    lambda me, _: Permissions(publish=("ledger.>",), subscribe=(f"_INBOX_{me}.>",)),
    database=RoleAccess("interlock_ledger", {"audit": "SELECT"}),
    settings=("relay_batch_size",),
    given=("job_public_key",),
)
"""A component no stack has: the row a new one would be."""


@pytest.fixture(autouse=True)
def _own_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials a test makes stay in its own directory."""
    monkeypatch.setenv("INTERLOCK_SECRETS_DIR", str(tmp_path / "secrets"))


def _settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


def _own_keys(env: dict[str, str]) -> set[str]:
    return {key for key in env if key.startswith("INTERLOCK_")}


def test_every_supervised_component_is_a_row_and_every_row_is_supervised(tmp_path: Path) -> None:
    table = [row.name for row in rows()]
    supervised = Supervisor(
        environments(_settings(tmp_path), NATS, DATABASE, composition.names()), tmp_path
    )

    assert composition.names() == table
    assert list(supervised.children) == table
    assert sorted(runners.components()) == sorted(table)
    assert {row.place for row in rows()} == {"core", "extra", "stage", "host", "partitions"}


def test_the_database_roles_and_their_grants_are_the_rows(tmp_path: Path) -> None:
    with_database = [row for row in rows() if row.database is not None]

    # each role once: the partition host connects as the projector it hosts
    once = list(dict.fromkeys(row.database_role for row in with_database))
    assert len(once) == len(with_database) - 1
    assert list(access.DATABASE_ROLES) == once
    assert sorted(access.component_roles(_settings(tmp_path))) == sorted(access.DATABASE_ROLES)
    assert [role.role for role in components.database_access()] == once
    assert all(row.database in components.database_access() for row in with_database)
    for row in rows():
        assert access.database_role(row.name) == row.database_role
    assert all(row.database is None for row in rows() if row.place in ("stage", "host"))


def test_every_identity_on_the_broker_is_a_row_or_a_client(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    given = access.broker_permissions(settings)
    clients = set(access.client_policies(settings)) - {components.GATEWAY}
    scope = Scope(tuple(r.stage for r in rows() if r.stage is not None))

    assert set(given) == {ADMIN, *(row.nats_identity for row in rows()), *clients}
    for row in rows():
        assert access.nats_identity(row.name) == row.nats_identity
        assert given[row.nats_identity] == row.permissions(row.nats_identity, scope)


def test_each_child_environment_is_its_rows_settings_and_what_it_is_given(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path)
    envs = environments(settings, NATS, DATABASE, composition.names())

    for row in rows():
        env = envs[row.name]
        copied = {n for n in settings_of(row) if getattr(settings, n) is not None}
        expected = {f"INTERLOCK_{n.upper()}" for n in (*copied, *row.given)}
        expected |= {"INTERLOCK_NATS_URL"}
        expected |= {"INTERLOCK_DATABASE_URL"} if row.database is not None else set()
        assert _own_keys(env) == expected, row.name
        assert f"//{row.nats_identity}:" in env["INTERLOCK_NATS_URL"]


def test_a_rows_settings_are_real_settings_fields_and_what_it_is_given_is_known() -> None:
    fields = set(Settings.model_fields)

    for row in rows():
        assert set(settings_of(row)) <= fields, row.name
        assert set(row.given) <= fields & GIVEN, row.name
        assert not set(row.given) & set(settings_of(row)), row.name
        assert row.listens is None or set(row.listens) <= set(settings_of(row)), row.name


def test_every_row_names_a_runner_and_a_readiness_check() -> None:
    for row in rows():
        assert callable(runners.component(row.name)), row.name
        assert health._readiness(row.name) == row.ready
    workflow_type, stage = next(row.stage for row in rows() if row.stage is not None)
    assert health._consumers_of(f"{workflow_type}.{stage}") == [
        (subjects.STREAM_JOBS, subjects.stage_consumer(workflow_type, stage))
    ]


def test_a_projector_partition_is_the_projectors_row() -> None:
    for name in ("projector.0", "projector.3"):
        assert components.row_of(name) == components.row_of("projector")
        assert access.nats_identity(name) == "projector"
    with pytest.raises(KeyError):
        components.row_of("nobody")


def test_adding_a_component_is_adding_one_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path)
    assert "ledger" not in composition.names()
    monkeypatch.setattr(components, "TABLE", (*components.TABLE, LEDGER))

    names = composition.names()
    supervised = Supervisor(environments(settings, NATS, DATABASE, names), tmp_path)
    env = environments(settings, NATS, DATABASE, ["ledger"])["ledger"]

    assert "ledger" in supervised.children
    assert names.index("ledger") < names.index(components.STAGE_HOST)
    assert runners.component("ledger") is run_relay.run_timer
    assert access.database_role("ledger") == "interlock_ledger"
    assert "interlock_ledger" in access.component_roles(settings)
    assert LEDGER.database in components.database_access()
    assert access.broker_permissions(settings)["ledger"].publish == ("ledger.>",)
    assert env["INTERLOCK_RELAY_BATCH_SIZE"] == str(settings.relay_batch_size)
    assert "PUBLIC KEY" in env["INTERLOCK_JOB_PUBLIC_KEY"]
    assert env["INTERLOCK_DATABASE_URL"].startswith("postgresql://interlock_ledger:")
    assert env["INTERLOCK_NATS_URL"].startswith("nats://ledger:")
    assert health._readiness("ledger") == "connected"
