"""The state projector: the pure transition engine and the service that applies its decisions
to PostgreSQL atomically."""
