"""What a workflow holds is JSON, typed `object` by the public API: a test reads it loosely,
`loose(await env.data(wf))["effect"]["status"]`, and a wrong shape fails the assertion."""

from __future__ import annotations

from typing import Any


def loose(value: object) -> Any:
    """`value` as it is, typed for reading nested JSON in an assertion."""
    return value
