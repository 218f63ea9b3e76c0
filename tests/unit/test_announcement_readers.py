"""Who reads which announcements, as configured: a client limited to some tenants or types is
given only their subjects, plainly and through consumers under its own names."""

from __future__ import annotations

from interlock.config import access
from interlock.config.components import RELAY
from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy
from interlock.contracts.partitions import PROJECTOR
from interlock.messaging import permissions as broker
from interlock.messaging.readers import announcement_reads
from tests.support.subjects import allowed
from tests.support.workflows import STAGES

INSTALLED = ["support", "request"]
GLOBEX = ClientPolicy(publish={"signal"}, types={"support"}, tenants={"globex"})
EVERYTHING = ClientPolicy(publish={"signal"}, types={"*"}, tenants={"*"})


def test_a_tenant_limited_client_reads_its_tenants_subjects_only() -> None:
    reads = announcement_reads("desk", GLOBEX, INSTALLED)

    assert allowed(reads.subscribe, subjects.tenant_out("globex", "support", "completed"))
    assert not allowed(reads.subscribe, subjects.tenant_out("acme", "support", "completed"))
    assert not allowed(reads.subscribe, subjects.tenant_out("globex", "request", "completed"))
    assert not allowed(reads.subscribe, subjects.out("support", "completed"))


def test_consumers_are_created_under_own_names_with_own_filters_only() -> None:
    reads = announcement_reads("desk", GLOBEX, INSTALLED)
    create = f"$JS.API.CONSUMER.CREATE.{subjects.STREAM_OUT}"
    own, own_filter = "desk-out-0", subjects.tenant_out("globex", "support", ">")

    assert allowed(reads.publish, f"{create}.{own}.{own_filter}")
    assert not allowed(reads.publish, f"{create}.{own}.wf.out.support.>")
    assert not allowed(reads.publish, f"{create}.{own}")
    assert not allowed(reads.publish, create)
    assert not allowed(reads.publish, f"{create}.other-out-0.{own_filter}")
    assert not allowed(reads.publish, f"{create}.desk-out-8.{own_filter}")
    delete = f"$JS.API.CONSUMER.DELETE.{subjects.STREAM_OUT}"
    assert allowed(reads.publish, f"{delete}.{own}")
    assert not allowed(reads.publish, f"{delete}.other-out-0")


def test_a_client_allowed_everything_keeps_the_stable_subjects_and_unnamed_consumers() -> None:
    reads = announcement_reads("approvals", EVERYTHING, INSTALLED)

    assert allowed(reads.subscribe, subjects.out("support", "approval_requested"))
    assert allowed(reads.subscribe, subjects.tenant_out("acme", "invoice", "completed"))
    assert allowed(reads.publish, f"$JS.API.CONSUMER.CREATE.{subjects.STREAM_OUT}")


def test_only_the_outbox_publishers_announce_for_a_tenant() -> None:
    given = access.permissions_of(STAGES, {"desk": GLOBEX}, INSTALLED)
    announcement = subjects.tenant_out("globex", "support", "completed")

    publishers = {name for name, p in given.items() if allowed(p.publish, announcement)}
    assert publishers == {broker.ADMIN, PROJECTOR, RELAY}


def test_a_tenant_that_is_no_subject_token_gets_one_of_its_own() -> None:
    odd = subjects.tenant_token("acme.eu *")

    assert odd.startswith("~")
    assert subjects.is_token(odd.removeprefix("~"))
    assert odd != subjects.tenant_token("acme.eu")
    assert subjects.tenant_token("acme") == "acme"
    assert subjects.tenant_out("acme.eu *", "support", ">").count(".") == 4
