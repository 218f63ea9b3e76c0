"""`RecordedModel`: answers from a fixture file, for tests and replays. No network.

Two file formats are accepted:

- a case file (what `interlock demo --fixture` runs): ``{"classifier_version": ...,
  "cases": [{"id", "event": {"event_id", ...}, "classifier": [outcome, ...]}, ...]}`` —
  answers keyed by ``event.event_id``; a case with a ``resume_decision`` and no
  ``classifier`` (a run resumed from an authored classified checkpoint) answers that
  decision; cases with neither (replays, conflicts) contribute none, and other keys are
  ignored;
- a native one: ``{"model_version": ..., "answers": {"<case_key>": [outcome, ...]}}``; a key
  may also be ``"<task>:<case_key>"`` to give one case different answers per task (that key
  wins over the plain one).

An outcome is ``{"type": "decision", "value": {...}}`` (the output, returned as is: the caller
validates it; optionally with the ``"tokens": {"input", "output"}`` the call used) or
``{"type": "timeout"}`` (raises `ExternalTimeout`). Attempt *n* of a case gets outcome *n*,
and every attempt past the last gets the last one.

The file is read and validated once, when the model is built: a malformed file raises
`RecordedFixtureError` naming the file and the problem. A request whose case key has no
answers raises `ExternalRejected(error_class="no_recorded_answer")`.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from interlock.services.errors import ExternalRejected, ExternalTimeout, RecordedFixtureError
from interlock.services.ports import ModelReply, ModelRequest

MODEL = "recorded"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Timeout(_Strict):
    type: Literal["timeout"]


class RecordedTokens(_Strict):
    input: int = Field(default=0, ge=0)
    output: int = Field(default=0, ge=0)


class Answered(_Strict):
    type: Literal["decision"]
    value: dict[str, Any]
    tokens: RecordedTokens = RecordedTokens()
    """What the recorded call used (reported as the reply's tokens; priced like any model)."""


Answer = Annotated[Timeout | Answered, Field(discriminator="type")]
Answers = Annotated[list[Answer], Field(min_length=1)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Event(_Open):
    event_id: Annotated[str, Field(min_length=1)]


class _Case(_Open):
    id: str
    event: _Event
    classifier: Answers | None = None
    resume_decision: dict[str, Any] | None = None

    def outcomes(self) -> list[Answer] | None:
        if self.classifier is None and self.resume_decision is not None:
            return [Answered(type="decision", value=self.resume_decision)]
        return self.classifier


class _CaseFile(_Open):
    classifier_version: str | None = None
    cases: list[_Case]


class _NativeFixture(_Strict):
    model_version: str | None = None
    answers: dict[str, Answers]


class RecordedModel:
    """A `ModelClient` replaying the outcomes a fixture file records per case and attempt."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.model_version, self._answers = _load(self.path)

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The recorded outcome for `request.case_key` at `request.attempt`."""
        started = time.perf_counter()
        outcomes = self._outcomes(request)
        outcome = outcomes[min(max(request.attempt, 1), len(outcomes)) - 1]
        if isinstance(outcome, Timeout):
            raise ExternalTimeout(
                f"recorded timeout for case {request.case_key!r}, attempt {request.attempt}"
            )
        return ModelReply(
            output=copy.deepcopy(outcome.value),
            model=MODEL,
            model_version=self.model_version,
            latency_ms=(time.perf_counter() - started) * 1000,
            prompt_tokens=outcome.tokens.input,
            completion_tokens=outcome.tokens.output,
        )

    def _outcomes(self, request: ModelRequest) -> list[Answer]:
        key = request.case_key
        if key is not None:
            found = self._answers.get(f"{request.task}:{key}") or self._answers.get(key)
            if found:
                return found
        raise ExternalRejected(
            f"no recorded answer for case {key!r} (task {request.task!r}) in {self.path}",
            error_class="no_recorded_answer",
        )


def _load(path: Path) -> tuple[str, dict[str, list[Answer]]]:
    """Read and validate the fixture: ``(model_version, outcomes by key)``."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _fixture_error(path, f"cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fixture_error(path, f"is not valid JSON ({exc})") from None
    if not isinstance(document, dict) or ("cases" in document) == ("answers" in document):
        raise _fixture_error(path, 'must be a JSON object with either "cases" or "answers"')
    try:
        if "answers" in document:
            native = _NativeFixture.model_validate(document)
            return native.model_version or MODEL, dict(native.answers)
        case_file = _CaseFile.model_validate(document)
    except ValidationError as exc:
        raise _fixture_error(path, _describe(exc)) from None
    return case_file.classifier_version or MODEL, _answers_by_event(path, case_file.cases)


def _answers_by_event(path: Path, cases: list[_Case]) -> dict[str, list[Answer]]:
    """Cases keyed by event id; two cases may share one only with the same outcomes."""
    answers: dict[str, list[Answer]] = {}
    owners: dict[str, str] = {}
    for case in cases:
        outcomes = case.outcomes()
        if outcomes is None:
            continue
        key = case.event.event_id
        if key in answers and answers[key] != outcomes:
            raise _fixture_error(
                path,
                f"cases {owners[key]!r} and {case.id!r} record different classifier "
                f"outcomes for event {key!r}",
            )
        answers.setdefault(key, outcomes)
        owners.setdefault(key, case.id)
    return answers


def _describe(exc: ValidationError) -> str:
    first = exc.errors(include_input=False, include_url=False)[:3]
    where = "; ".join(f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in first)
    more = f" (and {exc.error_count() - len(first)} more)" if exc.error_count() > 3 else ""
    return f"is malformed: {where}{more}"


def _fixture_error(path: Path, problem: str) -> RecordedFixtureError:
    return RecordedFixtureError(
        f"recorded model fixture {path} {problem}",
        hint='use seed 001\'s format {"cases": [...]} or {"answers": {"<case_key>": [...]}}',
    )
