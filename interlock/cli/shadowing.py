"""The cases of `interlock eval --shadow`, read from the configured (or embedded) database."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from interlock._sdk.models import ModelTask
from interlock._sdk.plugin import Plugin
from interlock.app.options import with_database
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.ops.evaluation import golden_cases
from interlock.ops.shadow import ShadowCases, compared_fields, shadow_cases


def recorded_cases(
    plugin: Plugin, task: ModelTask, golden: Path | None, since: datetime | None
) -> ShadowCases:
    """`task`'s recorded cases since `since`, compared on the fields `compared_fields` names
    (the task's golden set, if it ships one, says which)."""
    fields = compared_fields(task, golden_cases(golden) if golden is not None else ())
    registry = installed().registry

    async def work(_: Settings, database_url: str) -> ShadowCases:
        return await shadow_cases(database_url, plugin, registry, task, since=since, fields=fields)

    return with_database(work)
