"""Tenants share nothing: a workflow id is unique per tenant, the CLI finds a workflow by its id
alone and asks for the tenant only when several tenants use that id."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from interlock.projector.store.postgres import PostgresWorkflowStore
from tests.support.cli import cli_env
from tests.support.decisions import TRACE, started
from tests.support.payloads import REQUEST


async def _create(store: PostgresWorkflowStore, workflow_id: str, tenant_id: str) -> str:
    """Create the tenant's workflow; its request's event id."""
    start = started(workflow_id, tenant_id=tenant_id, payload={**REQUEST, "subject": tenant_id})
    assert await store.create(start.decision, start.event, start.fingerprint, TRACE)
    return start.event.event_id


def _show(
    tmp_path: Path, nats_url: str, database_url: str, *args: str
) -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp_path, INTERLOCK_NATS_URL=nats_url, INTERLOCK_DATABASE_URL=database_url)
    return subprocess.run(
        [sys.executable, "-m", "interlock", "show", *args, "--json"],
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
    )


async def test_show_finds_a_workflow_by_its_id_and_asks_for_the_tenant_only_when_ambiguous(
    store: PostgresWorkflowStore, nats_url: str, database_url: str, tmp_path: Path
) -> None:
    await _create(store, "order-7", "acme")
    theirs = await _create(store, "order-7", "globex")
    await _create(store, "order-8", "globex")

    alone = _show(tmp_path, nats_url, database_url, "order-8")
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["tenant_id"] == "globex"

    ambiguous = _show(tmp_path, nats_url, database_url, "order-7")
    assert ambiguous.returncode == 2
    assert "--tenant" in ambiguous.stderr
    assert "acme, globex" in ambiguous.stderr

    named = _show(tmp_path, nats_url, database_url, "order-7", "--tenant", "globex")
    assert named.returncode == 0, named.stderr
    view = json.loads(named.stdout)
    assert (view["tenant_id"], view["data"]["request"]["subject"]) == ("globex", "globex")
    assert [entry["event_id"] for entry in view["audit"]] == [theirs]
