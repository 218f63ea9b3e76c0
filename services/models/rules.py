"""`RulesModel`: a deterministic stand-in for a language model, with no network. The default.

It answers each task with the rules function the task's plugin declares (`ModelTask.rules`),
so a whole workflow (and the runtime's validation of model output) runs and can be tested
without a provider. A task without rules raises
`ExternalRejected(error_class="unsupported_task")`; a rules function's pydantic
`ValidationError` (malformed inputs) raises `ExternalRejected(error_class=
"invalid_model_input")` naming the fields, never their values. The answer depends only on the
request, never on time or chance (`latency_ms` is measured wall time).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from pydantic import ValidationError

from interlock.services.errors import ExternalRejected
from interlock.services.models.catalog import RulesFn
from interlock.services.ports import ModelReply, ModelRequest

MODEL = "rules"
MODEL_VERSION = "rules-1"


class RulesModel:
    """A `ModelClient` answering from the plugins' rules; deterministic and always available."""

    def __init__(self, rules: Mapping[str, RulesFn]) -> None:
        self._rules = dict(rules)

    async def complete(self, request: ModelRequest) -> ModelReply:
        """The task's rules applied to the request; `ExternalRejected` for a task without."""
        started = time.perf_counter()
        rules = self._rules.get(request.task)
        if rules is None:
            raise ExternalRejected(
                f"the rules model does not answer task {request.task!r}; configure a recorded "
                "or OpenAI-compatible model for it",
                error_class="unsupported_task",
            )
        try:
            output = rules(request.inputs, bool(request.repair_errors))
        except ValidationError as exc:
            fields = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}"
                for e in exc.errors(include_input=False)
            )
            raise ExternalRejected(
                f"invalid inputs for task {request.task!r}: {fields}",
                error_class="invalid_model_input",
            ) from None
        return ModelReply(
            output=output,
            model=MODEL,
            model_version=MODEL_VERSION,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
