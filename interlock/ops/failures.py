"""Why a workflow's stage last failed, in one line, from its view: what `interlock show`
and the console's workflow page print. Pure, so printing a view costs no database code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def last_failure(view: Mapping[str, Any]) -> str | None:
    """One line saying why a stage of the workflow last failed (`data.last_error`, which the
    engine keeps for every workflow type), e.g. `PERMANENT_ERROR in GREETING (stage greet,
    system greet): value_error: ValueError: boom`; None if no stage has failed."""
    error = (view.get("data") or {}).get("last_error")
    if not isinstance(error, Mapping):
        return None
    where = ", ".join(
        f"{label} {error[key]}"
        for label, key in (("stage", "stage"), ("system", "system"))
        if error.get(key)
    )
    line = f"{error.get('event')} in {error.get('state')}" + (f" ({where})" if where else "")
    line += f": {error.get('error_class')}"
    return f"{line}: {error['message']}" if error.get("message") else line
