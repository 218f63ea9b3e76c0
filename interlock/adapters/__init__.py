"""Adapters a user points at their own systems (`interlock.adapters.http`)."""
