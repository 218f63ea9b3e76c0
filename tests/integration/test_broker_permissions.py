"""The broker itself enforces who may publish what: an attacker holding one identity's
credentials (or none) can neither forge a job, nor ask about another stage's jobs, nor speak
for another stage or client. Each refusal is checked on the stream too: nothing was stored."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from interlock.contracts import result_requests, subjects
from interlock.contracts.job_questions import JobQuestion, job_question
from interlock.contracts.partitions import routing_key, slot_of
from interlock.contracts.urls import nats_inbox
from interlock.messaging.permissions import stage_identity
from tests.support.gateway_webhooks import count
from tests.support.polling import eventually
from tests.support.routing import mapped

pytestmark = pytest.mark.timeout(60)
EXECUTE = stage_identity("support", "execute_action")
CLASSIFY = stage_identity("support", "classify")
REFUSED = 0.5
KEY = routing_key("acme", "wf-1")
"""Seconds to wait for a publish acknowledgement that never comes: the server refuses a
forbidden publish with an asynchronous error and the client's request times out."""


Connect = Callable[[str], Awaitable[Client]]


@pytest.fixture
async def connect(identity_url: Callable[[str], str]) -> AsyncIterator[Connect]:
    opened: list[Client] = []

    async def as_identity(identity: str) -> Client:
        url = identity_url(identity)
        nc = await nats.connect(url, inbox_prefix=nats_inbox(url), error_cb=_quiet)
        opened.append(nc)
        return nc

    yield as_identity
    for nc in opened:
        await nc.close()


async def _quiet(_error: Exception) -> None:
    """Permission violations arrive here; the test looks at their effect instead."""


async def _refused(nc: Client, subject: str) -> bool:
    try:
        await nc.jetstream().publish(subject, b"{}", timeout=REFUSED)
    except (TimeoutError, nats.errors.TimeoutError):
        return True
    return False


async def test_anonymous_clients_cannot_connect(nats_url: str) -> None:
    server = nats_url.split("@", 1)[-1]
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(
            f"nats://{server}", max_reconnect_attempts=0, allow_reconnect=False, error_cb=_quiet
        )


@pytest.mark.parametrize("identity", ["upstream", "approvals", CLASSIFY, EXECUTE, "gateway"])
async def test_only_the_relay_may_publish_a_job(
    js: JetStreamContext, nc: Client, connect: Connect, identity: str
) -> None:
    forger = await connect(identity)
    job = subjects.job("support", "execute_action")

    assert await _refused(forger, job)
    assert await count(nc, subjects.STREAM_JOBS, job) == 0
    relay = await connect("relay")
    assert not await _refused(relay, job)


async def test_only_a_stage_may_ask_about_its_own_jobs_and_only_the_projector_hears(
    connect: Connect,
) -> None:
    question = JobQuestion(tenant_id="acme", workflow_id="wf-1", job_id="job-1")
    own = job_question("support", "execute_action", question)
    forged = [
        ("upstream", own),
        ("approvals", own),
        ("gateway", own),
        (CLASSIFY, own),  # another stage's job
        (EXECUTE, job_question("support", "classify", question)),
    ]
    heard, overheard = await _heard(
        connect,
        f"{result_requests.RQ_PREFIX}.*.job.>",
        forged,
        eavesdropper=CLASSIFY,
        sent=(EXECUTE, own),
        body=question.model_dump_json().encode(),
    )

    assert heard == [own]  # the others' questions never reached the projector
    assert overheard == []  # nor can a stage listen in


async def test_a_stage_publishes_results_on_its_own_subject_only(
    js: JetStreamContext, nc: Client, connect: Connect
) -> None:
    classify = await connect(CLASSIFY)
    others = subjects.result("support", "execute_action")

    assert await _refused(classify, others)
    assert await count(nc, subjects.STREAM_IN, others) == 0
    assert not await _refused(classify, subjects.result("support", "classify"))
    assert not await _refused(classify, subjects.result("support", "classify", KEY))


async def test_a_stage_cannot_take_another_stages_jobs(
    js: JetStreamContext, connect: Connect
) -> None:
    relay = await connect("relay")
    await relay.jetstream().publish(subjects.job("support", "execute_action"), b"{}")
    classify = await connect(CLASSIFY)
    theirs = await classify.jetstream().pull_subscribe_bind(
        durable=subjects.stage_consumer("support", "execute_action"), stream=subjects.STREAM_JOBS
    )
    with pytest.raises((TimeoutError, nats.errors.TimeoutError)):
        await theirs.fetch(1, timeout=REFUSED)
    consumer = subjects.stage_consumer("support", "execute_action")
    assert (await js.consumer_info(subjects.STREAM_JOBS, consumer)).num_pending == 1


@pytest.mark.parametrize(
    ("identity", "subject"),
    [
        ("upstream", subjects.request("support", "approvals")),
        ("upstream", subjects.signal("support", "upstream")),
        ("approvals", subjects.signal("support", "operator")),
        ("approvals", subjects.timer("support")),
        ("gateway", subjects.signal("support", "approvals")),
        ("gateway", subjects.request("support", "upstream")),
        (EXECUTE, subjects.timer("support")),
        # keyed, as the broker maps them, and straight onto a slot
        ("upstream", subjects.signal("support", "upstream", KEY)),
        ("approvals", subjects.signal("support", "operator", KEY)),
        ("approvals", subjects.timer("support", KEY)),
        ("gateway", subjects.request("support", "upstream", KEY)),
        (EXECUTE, subjects.timer("support", KEY)),
        (CLASSIFY, subjects.result("support", "execute_action", KEY)),
        ("upstream", f"wf.in.slot.3.signal.support.{KEY}.approvals"),
        ("approvals", f"wf.in.slot.3.timer.support.{KEY}"),
    ],
)
async def test_a_client_speaks_only_for_itself_and_only_what_it_may(
    js: JetStreamContext, nc: Client, connect: Connect, identity: str, subject: str
) -> None:
    client = await connect(identity)

    assert await _refused(client, subject)
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_clients_publish_under_their_own_name_and_read_announcements(
    js: JetStreamContext, connect: Connect
) -> None:
    upstream = await connect("upstream")
    approvals = await connect("approvals")

    assert not await _refused(upstream, subjects.request("support", "upstream"))
    assert not await _refused(approvals, subjects.signal("support", "approvals"))
    assert not await _refused(upstream, subjects.request("support", "upstream", KEY))
    assert not await _refused(approvals, subjects.signal("support", "approvals", KEY))
    relay = await connect("relay")
    announcement = subjects.out("support", "completed")
    await relay.jetstream().publish(announcement, b"done")
    consumer = await approvals.jetstream().subscribe(announcement, ordered_consumer=True)
    assert (await consumer.next_msg(timeout=5)).data == b"done"


async def test_the_gateway_publishes_requests_and_signals_under_its_own_name(
    js: JetStreamContext, nc: Client, connect: Connect
) -> None:
    gateway = await connect("gateway")

    for subject in (subjects.request("support", "gateway"), subjects.signal("support", "gateway")):
        assert not await _refused(gateway, subject)
        stored = await nc.jetstream().get_last_msg(subjects.STREAM_IN, subject)
        assert stored.subject == subject
    keyed = subjects.signal("support", "gateway", KEY)
    assert not await _refused(gateway, keyed)
    stored = await nc.jetstream().get_last_msg(subjects.STREAM_IN, mapped(keyed))
    assert stored.subject == mapped(keyed)


async def test_only_a_stage_may_ask_for_its_own_results_and_only_the_projector_hears(
    connect: Connect,
) -> None:
    asked = result_requests.result_request(slot_of(KEY), "support", KEY, "classify")
    forged = [(identity, asked) for identity in ["upstream", "approvals", EXECUTE, "gateway"]]
    heard, overheard = await _heard(
        connect,
        f"{result_requests.RQ_PREFIX}.*.result.>",
        forged,
        eavesdropper="approvals",
        sent=(CLASSIFY, asked),
        body=b"{}",
    )

    assert heard == [asked]  # the forgers' requests never reached the projector
    assert overheard == []  # nor can a client listen in


async def _heard(
    connect: Connect,
    pattern: str,
    forged: list[tuple[str, str]],
    *,
    eavesdropper: str,
    sent: tuple[str, str],
    body: bytes,
) -> tuple[list[str], list[str]]:
    """The subjects the projector heard on `pattern` and those `eavesdropper` overheard, once
    each forger of `forged` ((identity, subject)) published there and then `sent`'s identity
    did, on its subject (heard once at least)."""
    heard: list[str] = []
    overheard: list[str] = []

    async def hear(msg: Msg) -> None:
        heard.append(msg.subject)

    async def overhear(msg: Msg) -> None:
        overheard.append(msg.subject)

    projector = await connect("projector")
    await projector.subscribe(pattern, cb=hear)
    await projector.flush()
    for identity, subject in forged:
        forger = await connect(identity)
        await forger.publish(subject, body)
        await forger.flush()
    listener = await connect(eavesdropper)
    await listener.subscribe(pattern, cb=overhear)
    await listener.flush()
    identity, subject = sent
    sender = await connect(identity)
    await sender.publish(subject, body)
    await sender.flush()
    await eventually(lambda: _ready(heard), what=f"{subject} heard")
    return heard, overheard


async def _ready(heard: list[str]) -> bool:
    return bool(heard)
