"""One hostile round against a running stack: good support workflows (approved as soon as
asked) interleaved with hostile messages, published as the identities an attacker would hold;
then, once the stack is quiet, what became of every message and of every good workflow."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
import nats
import nats.errors
from nats.aio.client import Client
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.config import access
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.demo.runner import Run
from interlock.tools.hostile import account, redrive, timing
from interlock.tools.hostile.forge import GATEWAY, REDRIVE, SENDER, Hostile, forge
from interlock.tools.hostile.genuine import Genuine
from interlock.tools.hostile.good import TENANT, Stack, as_without_noise, settled
from interlock.tools.hostile.reads import SNOOP
from interlock.tools.hostile.snoop import Snoops
from interlock.tools.hostile.targets import Targets
from interlock.tools.hostile.web import CONSOLE, GATEWAY_READ, Web

CHUNK = 100
"""Hostile messages sent at once, unpaced."""
PACE_S = 0.1
"""Paced, a chunk goes every this many seconds."""


@dataclass
class Report:
    sent: dict[str, int]
    fates: dict[str, int]
    good: int
    good_as_without_noise: int
    good_failures: list[str]
    seconds: float
    good_seconds: list[float] = field(default_factory=list)
    """Each good workflow's seconds from its request's publication to its last commit."""
    good_split: list[timing.Split] = field(default_factory=list)
    """Where those seconds went."""
    rate: float = 0.0
    """Hostile messages a second, as they actually went out."""
    accepted_kinds: dict[str, int] = field(default_factory=dict)
    """The kinds of the messages accepted (none may be)."""
    timing: timing.Timing | None = None
    """Those against the quiet stack's, when the round was timed."""

    @property
    def ok(self) -> bool:
        bad = self.fates.get(account.ACCEPTED, 0) + self.fates.get(account.UNACCOUNTED, 0)
        timely = self.timing is None or self.timing.within_bound
        return bad == 0 and self.good == self.good_as_without_noise and timely

    def as_json(self) -> dict[str, Any]:
        return {
            "messages": sum(self.sent.values()),
            "sent": self.sent,
            "refused": {k: v for k, v in self.fates.items() if k != account.ACCEPTED},
            "accepted": self.fates.get(account.ACCEPTED, 0),
            "accepted_by_kind": self.accepted_kinds,
            "unaccounted": self.fates.get(account.UNACCOUNTED, 0),
            "good_workflows": self.good,
            "good_completed_as_without_noise": self.good_as_without_noise,
            "good_failures": self.good_failures,
            "seconds": round(self.seconds, 1),
            "sent_per_s": round(self.rate, 1),
            **({"timing": self.timing.as_json()} if self.timing else {}),
            "ok": self.ok,
        }


async def play(
    stack: Stack,
    rng: random.Random,
    messages: int,
    good: int,
    kinds: Iterable[str] = (),
    *,
    rate: float = 0.0,
) -> Report:
    """Send `messages` hostile messages (of `kinds`, default every kind) interleaved with
    `good` good workflows, at `rate` messages a second (0: as fast as they are taken, in
    bursts of `CHUNK`); report."""
    started = time.monotonic()
    async with _Connections(stack) as conns, Genuine(stack, "hostile-good") as genuine:
        engine = queries.open_reader(stack.database_url, pool_size=4)
        try:
            good_traffic = _Good(genuine, conns.bus, engine, stack.database_url)
            runs = [await good_traffic.start()]
            sent, answers, achieved = await _interleave(
                conns, engine, good_traffic, rng, messages=messages, runs=runs, good=good,
                kinds=kinds, rate=rate)  # fmt: skip
            await settled(conns.admin, runs)
            answers.update(await conns.snoops.settled(conns.admin))
            fates = await _fates(conns, engine, runs, sent, answers)
            checked = [await as_without_noise(stack, r) for r in runs]
            published = await genuine.published()
            good_seconds, good_split = await timing.durations(engine, published)
        finally:
            await engine.dispose()
    failures = [r.workflow_id for r, ok in zip(runs, checked, strict=True) if not ok]
    return Report(
        sent=dict(sorted(Counter(h.kind for h in sent).items())),
        fates=fates.counts(),
        accepted_kinds=_kinds(sent, fates, account.ACCEPTED),
        good=len(runs),
        good_as_without_noise=sum(checked),
        good_failures=failures,
        seconds=time.monotonic() - started,
        good_seconds=good_seconds,
        good_split=good_split,
        rate=achieved,
    )


@dataclass
class _Good:
    """The round's view of the genuine client's workflows (`genuine`, another process)."""

    genuine: Genuine
    bus: Clients
    engine: AsyncEngine
    database_url: str

    async def start(self) -> Run:
        workflow_id, customer = await self.genuine.start()
        return Run("good", workflow_id, TENANT, customer, self.bus, self.engine,
                   self.database_url)  # fmt: skip


async def _interleave(
    conns: _Connections, engine: AsyncEngine, good_traffic: _Good, rng: random.Random, *,
    messages: int, runs: list[Run], good: int, kinds: Iterable[str], rate: float,
) -> tuple[list[Hostile], dict[int, str], float]:  # fmt: skip
    """Hostile messages in chunks; a good workflow starts every few chunks. Paced (`rate`),
    a chunk goes every `PACE_S` whatever became of the last (a send the broker refuses waits
    out its publish timeout); unpaced, each burst is answered before the next. Also returns
    the rate the messages actually went out at."""
    sent: list[Hostile] = []
    answers: dict[int, str] = {}
    # Another round's numbers are not this one's, the same seed's included: the numbers are
    # in the messages' event ids, and the audit of an earlier round on the same installation
    # would otherwise be read as this round's.
    first = secrets.randbits(32) * 1_000_000
    size = max(1, min(CHUNK, round(rate * PACE_S))) if rate else CHUNK
    chunks = max(1, -(-messages // size))
    every = max(1, chunks // max(1, good - 1))
    in_flight: list[tuple[list[Hostile], asyncio.Future[list[str | None]]]] = []
    tracked = Targets(engine)
    began = time.monotonic()
    for index in range(chunks):
        if index and index % every == 0 and len(runs) < good:
            runs.append(await good_traffic.start())
        targets = await tracked.of(runs)
        batch = forge(rng, first + len(sent), min(size, messages - len(sent)), targets, kinds)
        sending = asyncio.gather(*(conns.send(h) for h in batch))
        in_flight.append((batch, sending))
        sent += batch
        if rate:  # the pace is kept on average: a slow chunk is caught up by the next ones
            await asyncio.sleep(max(0.0, began + len(sent) / rate - time.monotonic()))
        else:
            await sending
    achieved = len(sent) / max(time.monotonic() - began, 1e-9)
    for batch, results in in_flight:
        answers.update((h.number, a) for h, a in zip(batch, await results, strict=True) if a)
    while len(runs) < good:
        runs.append(await good_traffic.start())
    return sent, answers, achieved


def _kinds(sent: list[Hostile], fates: account.Fates, fate: str) -> dict[str, int]:
    """How many messages of each kind met `fate`."""
    return dict(
        sorted(Counter(h.kind for h in sent if fates.by_number.get(h.number) == fate).items())
    )


async def _fates(
    conns: _Connections, engine: AsyncEngine, runs: list[Run], sent: list[Hostile],
    answers: dict[int, str],
) -> account.Fates:  # fmt: skip
    fates = account.Fates()
    for number, answer in answers.items():
        fates.record(number, answer)
    await account.dead_letters(conns.admin.jetstream(), fates)
    await account.decisions(engine, sent, fates)
    await account.replays(engine, [r.workflow_id for r in runs], sent, fates)
    for h in sent:
        fates.record(h.number, account.UNACCOUNTED)
    return fates.of({h.number for h in sent})


class _Connections:
    """A connection per identity the hostile messages are sent as (held by an attacker),
    the installation's own clients for the good traffic, and `admin` to look."""

    def __init__(self, stack: Stack) -> None:
        self._stack = stack
        self._by_identity: dict[str, Client] = {}
        self.http = httpx.AsyncClient(base_url=stack.gateway_url, timeout=10.0)

    async def __aenter__(self) -> _Connections:
        self.bus = await Clients.connect(self._stack.settings, self._stack.server, "hostile")
        self.admin = await self._connect("admin")
        self.snoops = Snoops(self._connect, TENANT)
        await self.snoops.prepare()
        self.web = Web(self._stack.console_url, self._stack.viewer_password, self.http)
        await self.web.prepare()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for nc in self._by_identity.values():
            await nc.close()
        await self.bus.close()
        await self.web.close()
        await self.http.aclose()

    async def _connect(self, identity: str) -> Client:
        if identity not in self._by_identity:
            secrets = access.secrets_of(self._stack.settings)
            url = access.nats_url_as(self._stack.server, identity, secrets)
            self._by_identity[identity] = await nats.connect(
                nats_servers(url), inbox_prefix=nats_inbox(url), error_cb=_quiet
            )
        return self._by_identity[identity]

    async def send(self, h: Hostile) -> str | None:
        """Send `h`; the broker's or the gateway's answer when it is the message's fate."""
        if h.identity == REDRIVE:
            secret = self._stack.settings.gateway_senders[SENDER].secret.get_secret_value()
            return await redrive.attempt(self.http, self.admin.jetstream(), h, secret)
        if h.identity == SNOOP:
            return await self.snoops.attempt(h)
        if h.identity == CONSOLE:
            return await self.web.console(h)
        if h.identity == GATEWAY_READ:
            secret = self._stack.settings.gateway_senders[SENDER].secret.get_secret_value()
            return await self.web.read(h, SENDER, secret)
        if h.identity == GATEWAY:
            response = await self.http.post(h.subject, content=h.body, headers=h.headers)
            if response.status_code == 202:
                return account.ACCEPTED
            return f"gateway_{_error(response)}"
        js = (await self._connect(h.identity)).jetstream()
        try:
            ack = await js.publish(h.subject, h.body, headers=h.headers, timeout=5.0)
        except (nats.errors.Error, TimeoutError):
            return "refused_by_broker"
        return "dropped_as_duplicate" if ack.duplicate else None


async def _quiet(_error: Exception) -> None:
    """The broker's permission violations: each attempt's fate is read from its effect."""


def _error(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", response.status_code))
    except ValueError:
        return str(response.status_code)
