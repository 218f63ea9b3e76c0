"""The database roles of the components, and only the grants each one needs.

`interlock migrate` creates or updates them after the schema migrations (idempotent); their
passwords come from the installation's secrets. The projector decides and records; the relay
reads the outbox and moves its cursor (and samples the gauges); the timer service claims and
marks timers; the simulator owns its own schema; the gateway reads one workflow's state and
the outcome of an event through a function (no table at all). Notifications (LISTEN) and
advisory locks need no grant; identity columns need none on their sequences either.
"""

from __future__ import annotations

from collections.abc import Mapping

import asyncpg

from interlock.contracts.urls import asyncpg_dsn

PROJECTOR_ROLE = "interlock_projector"
RELAY_ROLE = "interlock_relay"
TIMER_ROLE = "interlock_timer"
SIMULATOR_ROLE = "interlock_sim"
CONSOLE_ROLE = "interlock_console"
GATEWAY_ROLE = "interlock_gateway"

GRANTS: dict[str, dict[str, str]] = {
    PROJECTOR_ROLE: {
        "workflows": "SELECT, INSERT, UPDATE",
        "audit": "INSERT",
        "processed_events": "SELECT, INSERT",
        "refused_events": "SELECT, INSERT",
        # SELECT, UPDATE: a decision reads whether its workflow has rows still unpublished,
        # and the projector marks the rows it published itself.
        "outbox": (
            "SELECT (id, workflow_id, published_at, relay_after), INSERT, UPDATE (published_at)"
        ),
        "interlock_meta": "SELECT",
        "timers": "SELECT, INSERT, UPDATE",
        # SELECT: a duplicate event id is compared with the event accepted under it
        # (`projector.duplicates`): a different message is refused, not dropped unseen.
        "history": "SELECT, INSERT",
        # A decision reads whether its workflow is paused (FOR SHARE, which needs an UPDATE
        # grant on a column) and then holds its rows back instead of writing them to the outbox;
        # it reads whether rows of its workflow are still held (they go out before its own).
        "pauses": "SELECT, UPDATE (paused_at)",
        "held_outbox": "SELECT (workflow_type, tenant_id, workflow_id), INSERT",
    },
    RELAY_ROLE: {
        "interlock_meta": "SELECT",
        # INSERT: the open-job sweeper re-dispatches a job as a copy of its outbox row.
        "outbox": "SELECT, INSERT, UPDATE (published_at), DELETE",
        "relay_cursor": "SELECT, INSERT, UPDATE",
        # The stuck-workflow and outcome gauges read these; they never write them.
        "workflows": "SELECT",
        "audit": "SELECT",
        "timers": "SELECT",
        # The reminder pass counts the reminders of waits on a person and forgets past waits.
        "human_wait_reminders": "SELECT, INSERT, UPDATE, DELETE",
        # The sweeper leaves the jobs of paused workflows alone.
        "pauses": "SELECT",
    },
    TIMER_ROLE: {
        "timers": "SELECT, UPDATE",
        # Timers of a paused workflow fall due but fire only on resume.
        "pauses": "SELECT",
    },
    SIMULATOR_ROLE: {},
    # The operator console only reads: its pages (archived workflows too), the stuck
    # workflows, the outbox lag.
    CONSOLE_ROLE: {
        "workflows": "SELECT",
        "workflow_archive": "SELECT",
        "audit": "SELECT",
        "timers": "SELECT",
        "outbox": "SELECT",
        "relay_cursor": "SELECT",
        "human_wait_reminders": "SELECT",
        "pauses": "SELECT",
        "held_outbox": "SELECT",
        "operator_log": "SELECT",
    },
    GATEWAY_ROLE: {},
}
"""Table privileges per role, on the tables of the `public` schema."""

PRUNE = "interlock_prune(text[], text[], timestamptz, timestamptz, integer)"
"""Retention (migration 0006): archives finished workflows, forgets old processed events."""
PRUNE_HISTORY = "interlock_prune_history(timestamptz, integer)"
"""History retention (migration 0008): forgets the histories of long-idle workflows."""

WORKFLOW_STATUS = "interlock_workflow_status(text, text, text, text)"
"""The gateway's only read (migration 0009): state, version, update time, an event's outcome."""

SIMULATOR_SCHEMA = "sim"
"""The simulator's ledgers live in their own schema, which its role owns."""


async def provision_roles(database_url: str, passwords: Mapping[str, str]) -> None:
    """Create or update every role with its password, revoke what it should not have and
    grant what it needs. Needs a user that may create roles (the migrating admin)."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url), timeout=10)
    try:
        async with connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext('interlock.roles'))")
            for role, tables in GRANTS.items():
                await _ensure_role(connection, role, passwords[role])
                await connection.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
                for table, privileges in tables.items():
                    await connection.execute(f"GRANT {privileges} ON {table} TO {role}")
            # Pruning runs in the relay's process, through a function with its owner's rights.
            for function in (PRUNE, PRUNE_HISTORY):
                await connection.execute(f"GRANT EXECUTE ON FUNCTION {function} TO {RELAY_ROLE}")
            await connection.execute(
                f"GRANT EXECUTE ON FUNCTION {WORKFLOW_STATUS} TO {GATEWAY_ROLE}"
            )
            await connection.execute(
                f"CREATE SCHEMA IF NOT EXISTS {SIMULATOR_SCHEMA} AUTHORIZATION {SIMULATOR_ROLE}"
            )
            await connection.execute(f"ALTER SCHEMA {SIMULATOR_SCHEMA} OWNER TO {SIMULATOR_ROLE}")
            # Tables an older installation created as another user become the role's too.
            for (table,) in await connection.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1", SIMULATOR_SCHEMA
            ):
                await connection.execute(
                    f'ALTER TABLE {SIMULATOR_SCHEMA}."{table}" OWNER TO {SIMULATOR_ROLE}'
                )
    finally:
        await connection.close()


async def _ensure_role(connection: asyncpg.Connection, role: str, password: str) -> None:
    exists = await connection.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
    verb = "ALTER" if exists else "CREATE"
    # Utility statements take no parameters; the password is a literal quoted by the
    # server's own quote_literal, and the statement is never logged by us.
    literal = await connection.fetchval("SELECT quote_literal($1)", password)
    await connection.execute(
        f"{verb} ROLE {role} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {literal}"
    )
