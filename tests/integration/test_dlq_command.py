"""`interlock dlq`: an operator lists, inspects and redrives dead letters; a redriven letter
keeps its event id, so a duplicate of it is still decided once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from interlock.contracts import subjects
from interlock.contracts.partitions import key_of
from tests.support.cli import cli_env, cli_streams, dead_letters
from tests.support.harness import Harness, projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.routing import mapped

pytestmark = pytest.mark.timeout(120)


async def test_an_operator_lists_shows_and_redrives_dead_letters(
    nats_url: str, database_url: str, tmp_path: Path
) -> None:
    env = cli_env(tmp_path, INTERLOCK_NATS_URL=nats_url, INTERLOCK_DATABASE_URL=database_url)
    cancel = envelope("CANCEL_REQUESTED", workflow_id="late", role="operator", event_id="c-1")
    async with projector_running(nats_url, database_url) as h:
        await h.nc.jetstream().publish(subjects.signal("support", "approvals"), b"{not json")
        for copy in ("a", "b"):  # the same command twice, before its workflow exists
            await h.publish(cancel, msg_id=f"cancel-{copy}")

        async def all_dead() -> list[dict[str, Any]] | None:
            found = await dead_letters(env)
            return found if len(found) == 3 else None

        letters = await eventually(all_dead, what="three dead letters", within=30)
        assert sorted(d["reason"] for d in letters) == [
            "bad_json",
            "unknown_workflow",
            "unknown_workflow",
        ]
        unknown = await dead_letters(env, "--reason", "unknown_workflow", "--source", "projector")
        assert [d["event_id"] for d in unknown] == ["c-1", "c-1"]

        code, out, _ = await cli_streams(env, "dlq", "show", str(unknown[0]["id"]), "--json")
        shown = json.loads(out)
        assert (code, shown["body"]["event_id"], shown["subject"]) == (
            0,
            "c-1",
            mapped(subjects.signal("support", "approvals", key_of(cancel))),
        )

        await h.publish(envelope("START", workflow_id="late", event_id="late-req"))
        await h.at_state("late", "CLASSIFYING")
        code, out, err = await cli_streams(
            env, "dlq", "redrive", "--all", "--reason", "unknown_workflow"
        )
        assert code == 0, err
        await _cancelled_once(h)

    assert [d["reason"] for d in await dead_letters(env)] == ["bad_json"]


async def _cancelled_once(h: Harness) -> None:
    await h.at_state("late", "CANCELLED")

    async def both_decided() -> bool:
        info = await h.nc.jetstream().consumer_info(subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR)
        return bool(info.num_pending == 0 and info.num_ack_pending == 0)

    await eventually(both_decided, what="both redriven copies decided")
    accepted = await h.scalar(
        "SELECT count(*) FROM audit WHERE workflow_id = 'late' AND event_id = 'c-1' AND accepted"
    )
    assert accepted == 1
    assert (await h.view("late"))["version"] == 2


async def test_a_bad_dead_letter_id_is_a_one_line_answer(nats_url: str, tmp_path: Path) -> None:
    env = cli_env(
        tmp_path,
        INTERLOCK_NATS_URL=nats_url,
        INTERLOCK_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",
    )
    async with asyncio.timeout(60):
        code, out, err = await cli_streams(env, "dlq", "show", "987654")
        redrive_code, _, redrive_err = await cli_streams(env, "dlq", "redrive", "987654")
    assert (code, out) == (1, "")
    assert err.strip().splitlines() == ["no dead letter 987654 (see `interlock dlq list`)"]
    assert redrive_code == 1
    assert "no dead letter 987654" in redrive_err
