"""`interlock hostile`: a hostile-input run against the real stack.

Good refund requests run while hostile messages of every kind (malformed, oversized, deeply
nested, wrongly encoded, NUL-bearing, forged results, jobs and approvals, reserved ids, replays,
cross-tenant signals, premature timer firings, webhooks to the gateway, a sender's refused
webhook redriven from the dead letters, junk under the message ids of coming results and timer
firings, signals for workflows that do not exist, cancellations dated year 1, 9999 or days
ahead, a client of another tenant cancelling the good tenant's workflow, a decided event id
reused by another message, reads of another tenant's or type's announcements, another client's
consumer deleted, pulled from or taken over, consumers beyond a client's own; over the web,
logins past their bounds, guesses at the console operator's password, values no database can
take, a signed gateway read replayed elsewhere) are sent as the identities an attacker would
hold (bus clients, a gateway sender's captured headers, a console viewer's login). It prints how
many were sent of each kind, what became of them (refused or dead-lettered, by reason), and
whether every good workflow completed exactly as it would without the noise; exit 1 if any
hostile message was accepted or could not be accounted for, a good workflow went astray, or a
component crashed.
"""

from __future__ import annotations

import base64
import logging
import os
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import typer
from pydantic import SecretStr

from interlock.app import terminal
from interlock.app.bootstrap import prepare, supervised
from interlock.app.composition import stack_of
from interlock.app.embedded._process import free_port
from interlock.app.health import attached
from interlock.app.options import JsonOpt, load_settings, with_stack
from interlock.app.supervisor import Supervisor
from interlock.config import access
from interlock.config.components import CONSOLE, GATEWAY
from interlock.config.settings import ConsoleOperator, GatewaySender, Settings
from interlock.console.operators import hash_password
from interlock.tools.hostile import reads, timing, web
from interlock.tools.hostile.forge import SENDER
from interlock.tools.hostile.genuine import quiet_round
from interlock.tools.hostile.good import TENANT, Stack
from interlock.tools.hostile.round import Report, play

PARAMETERS = {"support": {"approval_sla_seconds": 3600.0, "retry_delay_scale": 0.02}}
"""Approval timers far off: a good workflow is approved at once, never by expiry."""
UNKNOWN_WORKFLOW_GRACE = 5.0
QUIET_RUNS = 5
"""Good workflows timed on the quiet stack, one at a time, before the round."""
RATE = 200.0
"""Hostile messages a second by default: 10,000 in under a minute, about three times what
one client sustained against the projector before its senders had bounded shares."""
"""Good workflows timed on the quiet stack, one at a time, before the round."""


def hostile(
    *,
    messages: Annotated[int, typer.Option(min=1, help="Hostile messages to send.")] = 10_000,
    good: Annotated[int | None, typer.Option(help="Good workflows (default: 1 per 500).")] = None,
    seed: Annotated[int | None, typer.Option(help="Replays the same messages.")] = None,
    rate: Annotated[
        float,
        typer.Option(
            min=0,
            help="Hostile messages a second, spread evenly; 0: as fast as the stack takes "
            "them, in bursts of 100.",
        ),
    ] = RATE,
    bound: Annotated[
        float,
        typer.Option(
            min=0,
            help="Each good workflow under attack may take at most this many times the quiet "
            "stack's median (timed first, one at a time); 0: not timed.",
        ),
    ] = timing.BOUND,
    json_output: JsonOpt = False,
) -> None:
    """Send hostile messages interleaved with good workflows; report what became of them."""
    chosen_seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    count = good or max(3, messages // 500)
    report, crashes = with_stack(
        lambda s, nats_url, database_url: run(
            s,
            nats_url,
            database_url,
            random.Random(chosen_seed),
            messages=messages,
            good=count,
            rate=rate,
            bound=bound,
        ),
        with_read_clients(load_settings()),
    )
    result = {**report.as_json(), "rate_asked": rate, "seed": chosen_seed, "crashes": crashes}
    result["ok"] = report.ok and not crashes
    if json_output:
        terminal.print_json(result)
    else:
        for key, value in result.items():
            terminal.console.print(f"{key}: {value}")
    if not result["ok"]:
        raise typer.Exit(1)


async def run(
    s: Settings,
    nats_url: str,
    database_url: str,
    rng: random.Random,
    *,
    messages: int,
    good: int,
    rate: float = 0.0,
    bound: float = 0.0,
) -> tuple[Report, dict[str, int]]:
    """A round on its own components (refused while another process runs them); with a
    `bound`, timed against the quiet stack first."""
    if (await attached("projector", nats_url))[0]:
        terminal.errors.print("components are already running (e.g. `interlock up`); stop them")
        raise typer.Exit(2)
    async with hostile_stack(s, nats_url, database_url) as (stack, supervisor):
        quiet = await quiet_round(stack, QUIET_RUNS) if bound else ([], [])
        report = await play(stack, rng, messages, good, rate=rate)
        report.timing = timing.ready(quiet, (report.good_seconds, report.good_split), bound)
        crashes = {n: c.restarts for n, c in supervisor.children.items() if c.restarts}
    return report, crashes


@asynccontextmanager
async def hostile_stack(
    s: Settings, nats_url: str, database_url: str
) -> AsyncIterator[tuple[Stack, Supervisor]]:
    """The support workflow's components and the gateway, supervised, for the duration."""
    viewer = _password()
    settings = hostile_settings(s, viewer)
    await prepare(
        nats_url,
        database_url,
        access.component_roles(settings),
        partitions=settings.projector_partitions,
    )
    async with supervised(settings, nats_url, database_url, components(settings)) as supervisor:
        server = access.without_credentials(nats_url)
        gateway = f"http://127.0.0.1:{settings.gateway_port}"
        console = f"http://127.0.0.1:{settings.console_port}"
        yield Stack(settings, server, database_url, gateway, console, viewer), supervisor


def components(s: Settings) -> list[str]:
    """What a round runs: the support workflow's components as `up` runs them (its projector
    partitions, the stage services in one process on a small machine), the gateway and the
    console. A round timed on another shape of stack (a process per stage where `up` has one
    for all) would time processes the deployment does not run."""
    stack = stack_of(s, "support")
    return [*stack, GATEWAY, CONSOLE]


def with_read_clients(s: Settings) -> Settings:
    """`s` with the clients the hostile reads are made as (`reads.policies`) beside its own:
    the broker must be configured from these settings (the embedded one is)."""
    own = access.client_policies(s)
    for implicit in (access.OPERATOR, GATEWAY):  # added back by `client_policies`
        own.pop(implicit, None)
    return s.model_copy(update={"clients": {**own, **reads.policies(TENANT)}})


def hostile_settings(s: Settings, viewer_password: str) -> Settings:
    """`s` with the round's parameters, a gateway of one sender (for the good tenant), and a
    console whose operators are the attacker's viewer login (`viewer_password`) and an
    operator whose password nobody in the round knows."""
    secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    sender = GatewaySender(
        secret=SecretStr(secret),
        roles=frozenset({"support_approver"}),
        tenants=frozenset({TENANT}),
        actors=frozenset({"*"}),
    )
    operators = {
        web.VIEWER: ConsoleOperator(
            password_hash=SecretStr(hash_password(viewer_password)), roles=frozenset({"viewer"})
        ),
        web.OPERATOR: ConsoleOperator(
            password_hash=SecretStr(hash_password(_password())),
            roles=frozenset({"viewer", "approver", "operator"}),
        ),
    }
    update: dict[str, Any] = {
        "parameters": PARAMETERS,
        "console_host": "127.0.0.1",
        "console_port": free_port(),
        "console_operators": operators,
        "gateway_host": "127.0.0.1",
        "gateway_port": free_port(),
        "gateway_senders": {SENDER: sender},
        # Signals for workflows that do not exist wait this long (within their sender's share)
        # before they are dead-lettered: the round settles sooner than with the default 30 s.
        "unknown_workflow_grace": UNKNOWN_WORKFLOW_GRACE,
    }
    return with_read_clients(s).model_copy(update=update)


def _password() -> str:
    return base64.urlsafe_b64encode(os.urandom(18)).decode()
