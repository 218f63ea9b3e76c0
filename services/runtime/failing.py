"""What a stage's failure says about itself, and where it says it.

An exception a stage raises is described by its class and its message, but the message is
redacted before it leaves the process: only its first line, every value of the job's inputs
(and every longer word of them) replaced by `<redacted>`, long digit runs and e-mail
addresses masked, and the whole bounded to `MESSAGE_LIMIT` characters. A message such as
`ValueError("no customer C-1042")` may quote what the stage choked on; the audit, the console,
the logs and the spans keep what went wrong, not the customer's data.

`report` writes the one log line (class, redacted message, workflow id and the traceback's
frames, which are source lines, not values) and marks the current span as an error with the
same redacted text, so the stage's span in a trace says why it failed.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

MESSAGE_LIMIT = 200
"""The most characters of an exception's message that are kept (audit `detail` allows 1000)."""

REDACTED = "<redacted>"
_MIN_VALUE = 3
"""A whole input value shorter than this (a flag, a digit) is too common to be a secret and
too short to find reliably."""
_MIN_WORD = 5
"""Words of a longer input text at least this long are redacted on their own as well."""
_PATTERNS = (
    re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),  # e-mail addresses
    re.compile(r"\d[\d .-]{4,}\d"),  # card, account and phone numbers
)


def retryable(exc: BaseException) -> bool:
    """The stage declared `exc` worth trying again: its class says `retryable = True` (our
    `TransientError`s, the SDK's `Transient`, or a plugin's own class)."""
    return getattr(type(exc), "retryable", False) is True


def error_class(exc: BaseException) -> str:
    """A stable code for an unexpected exception, from its class: `ValueError` ->
    `value_error` (the `ErrorReport.error_class` pattern)."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", type(exc).__name__)
    code = re.sub(r"[^a-z0-9_]", "", snake.lower()).lstrip("_0123456789")
    return (code or "stage_error")[:64]


def failure_text(exc: BaseException, inputs: Mapping[str, Any] | None = None) -> str:
    """`<Class>: <redacted first line of the message>` (just the class if it says nothing)."""
    try:
        lines = str(exc).strip().splitlines()
    except Exception:  # a broken __str__ must not hide the failure it describes
        lines = []
    message = redact(lines[0] if lines else "", inputs or {})
    kind = type(exc).__name__
    text = f"{kind}: {message}" if message else kind
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def redact(message: str, inputs: Mapping[str, Any]) -> str:
    """`message` without any value of `inputs` in it (see the module's docstring)."""
    for secret in sorted(set(_secrets(inputs)), key=len, reverse=True):
        message = message.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        message = pattern.sub(REDACTED, message)
    return message


def _secrets(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _secrets(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _secrets(item)
    elif isinstance(value, bool) or value is None:
        return
    else:
        text = str(value).strip()
        if len(text) >= _MIN_VALUE:
            yield text
        yield from (w for w in re.findall(r"[\w@.+-]+", text) if len(w) >= _MIN_WORD)


def frames(exc: BaseException) -> str:
    """The traceback's frames (file, line, function, source line), without the exception's
    own message, which `failure_text` gives redacted."""
    return "".join(traceback.format_tb(exc.__traceback__)).rstrip()


def report(
    log: logging.Logger,
    level: int,
    what: str,
    exc: BaseException,
    *,
    workflow_id: str | None,
    inputs: Mapping[str, Any] | None = None,
) -> str:
    """Log `what` happened (`<stage> fails job <id>`) with the failure's redacted text, the
    workflow id and the frames; mark the current span as failed. The redacted text."""
    text = failure_text(exc, inputs)
    log.log(level, "%s of workflow %s: %s\n%s", what, workflow_id or "-", text, frames(exc))
    span = trace.get_current_span()
    span.set_status(Status(StatusCode.ERROR, text))
    span.set_attribute("interlock.error", text)
    span.add_event(
        "exception",
        {
            "exception.type": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "exception.message": text,
            "exception.stacktrace": frames(exc),
        },
    )
    return text
