"""The public contract from outside: `interlock up` on the embedded stack, a request from plain
nats-py, and what `show`, `list`, `trace` and `cancel` report as JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nats
import pytest

from interlock.config import access
from interlock.config.settings import Settings
from interlock.contracts.ids import workflow_id_for
from tests.support.cli import cli_env, interlock_up
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(180)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interlock", *args],
        env=cli_env(home),
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )


Up = tuple[Path, dict[str, Any], str]
"""The home of a running `interlock up`, its stack file and what it printed."""


@contextmanager
def _up(home: Path) -> Iterator[Up]:
    """`interlock up` (projector and relay only: no stage consumes the first job) on a fresh
    embedded stack, until the block ends."""
    with interlock_up(home, "projector", "relay") as printed:
        yield home, json.loads((home / "stack.json").read_text()), printed


@pytest.fixture
def running_up(tmp_path: Path) -> Iterator[Up]:
    """A stack of this test's own: it lists every workflow in a state."""
    with _up(tmp_path / "home") as running:
        yield running


@pytest.fixture(scope="module")
def shared_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    """One stack for the tests that read what `up` wrote, or look only at a workflow of their
    own (a stack takes long to start on two cores)."""
    with _up(tmp_path_factory.mktemp("shared-up") / "home") as running:
        yield running


async def test_a_request_from_plain_nats_py_is_visible_through_the_cli(
    running_up: Up,
) -> None:
    home, stack, _ = running_up
    event_id = f"contract-{uuid.uuid4()}"
    workflow_id = workflow_id_for("support", "acme", event_id)
    request = {
        "event_id": event_id,
        "type": "START",
        "workflow_type": "support",
        "tenant_id": "acme",
        "actor": {"id": "crm", "role": "upstream"},
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {
            "customer_id": "c-1",
            "subject": "Refund for a double charge",
            "body": "Charged twice.",
            "amount": "20.00",
            "currency": "EUR",
        },
    }
    upstream = _cli(home, "client-url", "upstream").stdout.strip()
    nc = await nats.connect(upstream, inbox_prefix="_INBOX_upstream")
    try:
        await nc.jetstream().publish("wf.in.request.support.upstream", json.dumps(request).encode())
    finally:
        await nc.drain()
    admin = access.nats_url_as(stack["nats_url"], "admin", access.secrets_of(Settings(home=home)))
    nc = await nats.connect(admin)
    try:
        job_consumer = await nc.jetstream().pull_subscribe_bind(
            durable="support-classify", stream="WF_JOBS"
        )
        (job,) = await job_consumer.fetch(1, timeout=60)
    finally:
        await nc.drain()
    assert json.loads(job.data)["workflow_id"] == workflow_id
    assert json.loads(job.data)["payload"]["stage"] == "classify"

    shown = json.loads(_cli(home, "show", workflow_id, "--json").stdout)
    assert {
        "workflow_id",
        "workflow_type",
        "state",
        "version",
        "definition_version",
        "data",
        "execution",
        "audit",
    } <= set(shown)
    assert (shown["state"], shown["version"]) == ("CLASSIFYING", 1)
    (entry,) = shown["audit"]
    assert {
        "event_id",
        "event_type",
        "from_state",
        "to_state",
        "accepted",
        "reason",
        "actor",
        "state_version",
        "trace_id",
        "occurred_at",
    } <= set(entry)
    assert (entry["event_id"], entry["to_state"], entry["accepted"]) == (
        event_id,
        "CLASSIFYING",
        True,
    )
    assert list(shown["execution"]["open_jobs"]) == [json.loads(job.data)["event_id"]]

    listed = json.loads(_cli(home, "list", "--state", "CLASSIFYING", "--json").stdout)
    assert [row["workflow_id"] for row in listed] == [workflow_id]

    async def traced() -> dict[str, Any] | None:
        tree = json.loads(_cli(home, "trace", workflow_id, "--json").stdout)
        return (
            tree
            if any(s["name"].startswith("wf.job.support.classify") for s in tree["spans"])
            else None
        )

    tree = await eventually(traced, within=30, what="local spans")
    assert tree["trace_id"] == entry["trace_id"]
    assert {"span_id", "parent_span_id", "name", "service", "start", "end", "attributes"} <= set(
        tree["spans"][0]
    )

    cancelled = _cli(home, "cancel", workflow_id, "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    assert json.loads(cancelled.stdout)["to_state"] == "CANCELLED"
    late = _cli(home, "approve", workflow_id, "--json")
    assert late.returncode == 3  # refused by the projector
    assert json.loads(late.stdout)["reason"] == "terminal"


def _secret_values(home: Path) -> list[str]:
    directory = access.secrets_of(Settings(home=home)).directory
    return [
        value
        for name in ("nats.json", "postgres.json")
        for value in json.loads((directory / name).read_text()).values()
    ]


def test_up_prints_no_password_and_writes_its_endpoints(
    shared_up: Up,
) -> None:
    home, stack, printed = shared_up
    secrets = _secret_values(home)

    assert stack["database_url"] in printed
    assert not [s for s in secrets if s in printed]
    endpoints = json.loads((home / "endpoints.json").read_text())
    assert (home / "endpoints.json").stat().st_mode & 0o077 == 0
    assert endpoints["nats_url"] == stack["nats_url"]
    assert endpoints["database_url"] == stack["database_url"]
    assert not [s for s in secrets if s in endpoints["database_url"]]
    assert {"upstream", "approvals", "operator"} <= set(endpoints["clients"])
    assert endpoints["timings"] == Settings().timings()  # what an attaching demo compares
    upstream = _cli(home, "client-url", "upstream").stdout.strip()
    assert endpoints["clients"]["upstream"]["nats_url"] == upstream
    unknown = _cli(home, "client-url", "mallory")
    assert unknown.returncode == 2
    assert "upstream" in unknown.stderr


def _python(home: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=cli_env(home),
        cwd=home.parent,
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
    )


def _readme_snippet() -> str:
    """The README's nats-py example, exactly as a reader would copy it."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    after = readme.split("Start a support workflow with nothing but `nats-py`", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


async def test_the_readme_snippet_starts_a_workflow_as_written(
    shared_up: Up,
) -> None:
    home, _, _ = shared_up
    ran = _python(home, _readme_snippet())
    assert ran.returncode == 0, ran.stderr

    async def shown() -> dict[str, Any] | None:
        result = _cli(home, "show", "ticket-1042", "--json")
        return json.loads(result.stdout) if result.returncode == 0 else None

    workflow = await eventually(shown, within=30, what="the README's workflow")
    assert workflow["workflow_type"] == "support"


def test_a_second_up_on_the_same_home_is_refused_naming_the_first(
    shared_up: Up,
) -> None:
    home, stack, _ = shared_up
    try:
        second = subprocess.run(
            [sys.executable, "-m", "interlock", "up", "--only", "relay"],
            env=cli_env(home),
            text=True,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a second `interlock up` ran on the same home")
    lines = second.stderr.strip().splitlines()
    assert (second.returncode, len(lines)) == (2, 1), second.stderr
    assert f"pid {stack['owner_pid']}" in lines[0]
