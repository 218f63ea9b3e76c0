"""The tools' errors: a benchmark or a demo that cannot run as asked."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError


class NoWorkload(InterlockError):
    """The type ships no scenario of that name to benchmark with."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class BenchRefused(InterlockError):
    """The broker already has Interlock components: a benchmark would compete with them."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class FixtureError(InterlockError):
    """The case file cannot be read or is not in the case-file format."""

    code = ErrorCode.CONFIGURATION
    retryable = False
