"""Case files (request cases and their expected outcomes): loading, validation, and the
stack's settings.

A case file is facts about the world the stack runs in — requests, the classifier's
recorded answers, the approvals people give — plus the outcome each case is expected to
have. The runner uses the facts to drive the stack and never reads `expected` to decide an
outcome: it only compares the stack's outcome with it afterwards.

The `event` of a case is deliberately not validated here: whether it honours the transport
contract is for the projector's door to decide (a malformed event is an `invalid_event`
case, not a broken file). Everything else is, and a problem is reported naming the file
and the case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from interlock.services.errors import RecordedFixtureError
from interlock.services.models.recorded import RecordedModel
from interlock.tools.errors import FixtureError

SHIPPED = Path(__file__).with_name("fixtures") / "request_cases.json"
"""The eleven shipped request cases, run by plain `interlock demo` after the support
scenarios."""

Scenario = Literal[
    "normal",
    "replay",
    "conflict",
    "retry",
    "invalid_classifier",
    "policy_block",
    "approval_valid",
    "approval_stale",
    "resume",
    "unsupported",
    "state_conflict",
    "invalid_event",
]
NonEmpty = Annotated[str, Field(min_length=1)]
DEMO_REQUEST_PARAMETERS = {"retry_delay_scale": 0.02, "approval_sla_seconds": 10.0}
"""Short timings for the request workflow in the demo (a deployment's own values win)."""


class ApprovalFacts(BaseModel):
    """What the approver consents to; sent as the `APPROVED` signal when asked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workflow_version: NonEmpty
    policy_version: NonEmpty
    effect: NonEmpty


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: NonEmpty
    scenario: Scenario
    event: Any
    expected: NonEmpty
    classifier: list[dict[str, Any]] | None = None
    approval: ApprovalFacts | None = None
    resume_decision: dict[str, Any] | None = None

    @property
    def event_id(self) -> str | None:
        found = self.event.get("event_id") if isinstance(self.event, dict) else None
        return found if isinstance(found, str) and found else None


class Fixture(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    dataset: str | None = None
    max_classifier_attempts: int = Field(default=2, ge=1, le=20)
    cases: Annotated[list[Case], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique_ids(self) -> Fixture:
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise ValueError(f"case id {case.id!r} appears twice")
            seen.add(case.id)
        return self


def load(path: Path) -> Fixture:
    """The validated case file; `FixtureError` naming the file and the problem otherwise.

    The recorded classifier reads the same file, so it is checked too (every case with
    recorded answers needs an event id, answers for one event must agree …).
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _error(path, f"is not valid JSON ({exc})") from None
    try:
        fixture = Fixture.model_validate(document)
    except ValidationError as exc:
        raise _error(path, _describe(exc, document)) from None
    try:
        RecordedModel(path)
    except RecordedFixtureError as exc:
        raise _error(path, f"cannot serve as the recorded classifier: {exc}") from None
    return fixture


def environment(path: Path, fixture: Fixture, env: Mapping[str, str]) -> dict[str, str]:
    """The settings the components need for this file: the request workflow's classifier
    answers from it, and its attempt limit. Merged into `env`'s JSON values, keeping a
    deployment's own timings but never its attempt limit (the file's cases depend on it)."""
    parameters = json.loads(env.get("INTERLOCK_PARAMETERS") or "{}")
    request = {**DEMO_REQUEST_PARAMETERS, **parameters.get("request", {})}
    request["max_classifier_attempts"] = fixture.max_classifier_attempts
    models = json.loads(env.get("INTERLOCK_MODELS") or "{}")
    models["request"] = f"recorded:{path.resolve()}"
    return {
        "INTERLOCK_PARAMETERS": json.dumps({**parameters, "request": request}),
        "INTERLOCK_MODELS": json.dumps(models),
    }


def _describe(exc: ValidationError, document: Any) -> str:
    problems = []
    for err in exc.errors(include_input=False, include_url=False)[:3]:
        where = ".".join(str(part) for part in err["loc"]) or "<root>"
        problems.append(f"{_case_name(document, err['loc'])}{where}: {err['msg']}")
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "is not in seed 001's format: " + "; ".join(problems) + more


def _case_name(document: Any, loc: tuple[int | str, ...]) -> str:
    if len(loc) < 2 or loc[0] != "cases" or not isinstance(loc[1], int):
        return ""
    try:
        return f"case {document['cases'][loc[1]]['id']!r}: "
    except (KeyError, IndexError, TypeError):
        return ""


def _error(path: Path, problem: str) -> FixtureError:
    return FixtureError(
        f"case file {path} {problem}",
        hint="see tools/demo/fixtures/request_cases.json for the expected format",
    )
