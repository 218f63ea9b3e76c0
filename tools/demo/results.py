"""One scenario's outcome, as the demo's table and `--json` report it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ScenarioResult:
    name: str
    expected: str
    actual: str
    ok: bool
    workflow_id: str
    seconds: float
    failed_checks: list[str]

    @classmethod
    def judged(
        cls,
        name: str,
        expected: str,
        view: dict[str, Any] | None,
        *,
        workflow_id: str,
        seconds: float,
        failed_checks: list[str],
    ) -> ScenarioResult:
        """The outcome of a scenario whose workflow ended as `view` (None: never created)."""
        actual = view["state"] if view else "NOT_CREATED"
        ok = actual == expected and not failed_checks
        return cls(name, expected, actual, ok, workflow_id, seconds, failed_checks)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expected": self.expected,
            "actual": self.actual,
            "ok": self.ok,
            "workflow_id": self.workflow_id,
            "seconds": round(self.seconds, 3),
            "failed_checks": self.failed_checks,
        }
