"""Whole-stack fixtures live in tests/conftest.py (shared with the chaos tier)."""
