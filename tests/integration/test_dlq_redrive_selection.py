"""`interlock dlq redrive --type T …`: dead letters redriven as a selection. The preview decides
each letter's event on its workflow as it stands now (what the projector would do on redrive),
sends nothing; `--yes` redrives them and logs each with the operator and the selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from interlock.contracts import subjects
from tests.support.cli import cli_env, cli_streams, dead_letters
from tests.support.harness import projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(120)


async def test_dead_letters_are_previewed_then_redriven_as_a_selection(
    nats_url: str, database_url: str, tmp_path: Path, db: asyncpg.Connection
) -> None:
    env = cli_env(tmp_path, INTERLOCK_NATS_URL=nats_url, INTERLOCK_DATABASE_URL=database_url)
    cancel = envelope("CANCEL_REQUESTED", workflow_id="late", role="operator", event_id="c-9")
    async with projector_running(nats_url, database_url) as h:
        await h.nc.jetstream().publish(subjects.signal("support", "approvals"), b"{not json")
        await h.publish(cancel)

        async def both_dead() -> list[dict[str, Any]] | None:
            found = await dead_letters(env)
            return found if len(found) == 2 else None

        await eventually(both_dead, what="two dead letters", within=30)
        await h.publish(envelope("START", workflow_id="late", event_id="late-start"))
        await h.at_state("late", "CLASSIFYING")
        selection = ("dlq", "redrive", "--type", "support", "--reason", "unknown_workflow")

        code, out, err = await cli_streams(env, *selection, "--dry-run", "--json")
        assert code == 0, err
        preview = json.loads(out)
        [letter] = preview["workflows"]
        assert (letter["workflow_id"], letter["event_type"], letter["state"]) == (
            "late",
            "CANCEL_REQUESTED",
            "CLASSIFYING",
        )
        assert (letter["outcome"], letter["to_state"]) == ("accepted", "CANCELLED")
        assert (await h.view("late"))["state"] == "CLASSIFYING"  # nothing sent

        code, _, err = await cli_streams(env, *selection)
        assert code == 2
        assert "--yes" in err

        code, out, err = await cli_streams(env, *selection, "--yes", "--json")
        assert code == 0, err
        assert "[1/1] late" in err
        await h.at_state("late", "CANCELLED")

    assert [d["reason"] for d in await dead_letters(env)] == ["bad_json"]
    logged = await db.fetch(
        "SELECT operator, action, outcome, selection::text AS s FROM operator_log"
    )
    assert [(r["operator"], r["action"], r["outcome"], json.loads(r["s"])) for r in logged] == [
        ("cli-operator", "redrive", "accepted", {"type": "support", "reason": "unknown_workflow"})
    ]
