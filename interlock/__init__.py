"""Interlock: a durable workflow runtime on NATS JetStream and PostgreSQL."""
