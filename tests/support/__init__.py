"""Helpers shared by the test tiers (builders, drivers, polling)."""
