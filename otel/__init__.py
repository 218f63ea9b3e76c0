"""Tracing and metrics: the one place a provider is configured, and NATS header propagation."""
