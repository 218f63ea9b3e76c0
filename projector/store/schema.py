"""Table definitions for the read side (`interlock show`, `list`, the benchmark); the
migrations in `migrations/` create the tables, and the projector's hot path writes them with
the statements of `projector.store.sql`."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Integer,
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
    Column("tenant_id", Text, primary_key=True),
    Column("state", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("definition_version", Integer, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("execution", JSONB, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("correlation_id", Text),
    Column("trace_headers", JSONB, nullable=False),
    Column("replays", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

audit = Table(
    "audit",
    metadata,
    Column("id", BigInteger, primary_key=True),
    Column("tenant_id", Text, nullable=False),
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
    Column("error_class", Text),
    Column("error_message", Text),
)

workflow_archive = Table(
    "workflow_archive",
    metadata,
    Column("tenant_id", Text, primary_key=True),
    Column("id", Text, primary_key=True),
    Column("workflow_type", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("definition_version", Integer, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("execution", JSONB, nullable=False),
    Column("correlation_id", Text),
    Column("replays", JSONB, nullable=False),
    Column("audit", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("archived_at", DateTime(timezone=True), nullable=False),
)
"""Finished workflows moved out of the hot tables by retention, each with its audit trail."""
