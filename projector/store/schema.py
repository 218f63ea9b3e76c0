"""Table definitions used by queries (the migrations in `migrations/` create them)."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

metadata = MetaData()

workflows = Table(
    "workflows",
    metadata,
    Column("id", Text, primary_key=True),
    Column("workflow_type", Text, nullable=False),
    Column("tenant_id", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("definition_version", Integer, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("execution", JSONB, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("correlation_id", Text),
    Column("trace_headers", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

audit = Table(
    "audit",
    metadata,
    Column("id", BigInteger, primary_key=True),
    Column("workflow_id", Text, nullable=False),
    Column("workflow_type", Text, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("from_state", Text),
    Column("to_state", Text),
    Column("accepted", Boolean, nullable=False),
    Column("reason", Text),
    Column("detail", Text),
    Column("actor_id", Text, nullable=False),
    Column("actor_role", Text, nullable=False),
    Column("state_version", Integer, nullable=False),
    Column("definition_version", Integer),
    Column("causation_id", Text),
    Column("correlation_id", Text),
    Column("trace_id", Text),
    Column("guard_results", JSONB, nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
)

processed_events = Table(
    "processed_events",
    metadata,
    Column("workflow_id", Text, primary_key=True),
    Column("event_id", Text, primary_key=True),
    Column("accepted", Boolean, nullable=False),
    Column("processed_at", DateTime(timezone=True), nullable=False),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger, primary_key=True),
    # txid (xid8, default pg_current_xact_id()) is set by the database, never by us.
    Column("subject", Text, nullable=False),
    Column("headers", JSONB, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("workflow_id", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

timers = Table(
    "timers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("workflow_id", Text, nullable=False),
    Column("workflow_type", Text, nullable=False),
    Column("tenant_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("fire_at", DateTime(timezone=True), nullable=False),
    Column("branch", Text),
    Column("status", Text, nullable=False),
    Column("armed_version", Integer, nullable=False),
    Column("headers", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
