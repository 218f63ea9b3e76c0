"""A workflow type from a separate distribution, installed with pip, run by `interlock up`.

The hello plugin (tests/fixtures/plugins/hello, written only on the public API) is installed
by pip into a directory of its own, which the CLI processes get on their path: the runtime
finds it through its entry point, lists it, and runs it against real NATS and PostgreSQL,
its one stage calling a real HTTP greeting service bound by `INTERLOCK_ADAPTERS`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nats
import pytest
from aiohttp import web

from interlock.contracts.ids import workflow_id_for
from tests.support.cli import cli, cli_env, interlock_up
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(240)
HELLO = Path(__file__).parents[1] / "fixtures" / "plugins" / "hello"


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hello distribution, installed by pip into a directory of its own."""
    root = tmp_path_factory.mktemp("plugin")
    source, target = root / "hello", root / "site"
    shutil.copytree(HELLO, source)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    done = subprocess.run(
        [*pip, "--target", str(target), str(source)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target


class Greeter:
    """The greeting service: `GET /v1/greet/{name}` answers `{"text": "Hello, <name>!"}`."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.base_url = ""

    async def greet(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        self.names.append(name)
        return web.json_response({"text": f"Hello, {name}!"})


@pytest.fixture
async def greeter() -> AsyncIterator[Greeter]:
    service = Greeter()
    app = web.Application()
    app.router.add_get("/v1/greet/{name}", service.greet)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    service.base_url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/"
    try:
        yield service
    finally:
        await runner.cleanup()


def plugin_settings(site: Path, greeter: Greeter | None = None) -> dict[str, str]:
    """The environment over `cli_env` that puts the plugin on the path (and binds its port)."""
    adapters = {"hello": {"greeter": {"base_url": greeter.base_url}}} if greeter else {}
    # The caller's path stays behind the plugin's: it is how a checkout under test is imported.
    path = os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))
    return {"PYTHONPATH": path, "INTERLOCK_ADAPTERS": json.dumps(adapters)}


def plugin_env(home: Path, site: Path, greeter: Greeter | None = None) -> dict[str, str]:
    return cli_env(home, **plugin_settings(site, greeter))


@pytest.fixture
def running_up(
    tmp_path: Path, installed_plugin: Path, greeter: Greeter
) -> Iterator[dict[str, str]]:
    """`interlock up` on a fresh embedded stack with the plugin on the path: the core and the
    plugin's stage, until the test ends."""
    home, settings = tmp_path / "home", plugin_settings(installed_plugin, greeter)
    with interlock_up(home, "projector", "relay", "timer", "hello.greet", **settings):
        yield cli_env(home, **settings)


async def test_the_installed_plugin_is_listed_with_its_distribution(
    tmp_path: Path, installed_plugin: Path
) -> None:
    code, out = await cli(plugin_env(tmp_path, installed_plugin), "workflows", "--json")

    assert code == 0, out
    listed = {w["type"]: w for w in json.loads(out)["workflows"]}
    assert {"hello", "support", "request"} <= set(listed)
    hello = listed["hello"]
    assert hello["distribution"] == "interlock-hello-workflow 0.1.0"
    assert hello["versions"] == [1]
    assert [(s["name"], s["state"]) for s in hello["stages"]] == [("greet", "GREETING")]
    assert hello["ports"] == [{"name": "greeter", "protocol": "Greeter"}]


async def test_the_installed_plugins_diagram_is_drawn(
    tmp_path: Path, installed_plugin: Path
) -> None:
    code, out = await cli(plugin_env(tmp_path, installed_plugin), "graph", "hello")

    assert code == 0, out
    assert out.startswith("---\ntitle: hello v1\n---\nflowchart TD\n")
    assert "GREETING" in out
    assert "GREETED" in out


async def test_without_the_plugin_the_type_is_unknown(tmp_path: Path) -> None:
    code, out = await cli(cli_env(tmp_path), "workflows", "--json")

    assert code == 0, out
    assert "hello" not in {w["type"] for w in json.loads(out)["workflows"]}


async def test_a_hello_request_runs_end_to_end_under_up(
    running_up: dict[str, str], greeter: Greeter
) -> None:
    env = running_up
    event_id = f"hello-{uuid.uuid4()}"
    workflow_id = workflow_id_for("hello", "acme", event_id)
    request = {
        "event_id": event_id,
        "type": "START",
        "workflow_type": "hello",
        "tenant_id": "acme",
        "actor": {"id": "crm", "role": "upstream"},
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {"name": "Ada"},
    }
    _, upstream = await cli(env, "client-url", "upstream")
    nc = await nats.connect(upstream.strip(), inbox_prefix="_INBOX_upstream")
    try:
        await nc.jetstream().publish("wf.in.request.hello.upstream", json.dumps(request).encode())
    finally:
        await nc.drain()

    async def greeted() -> dict[str, Any] | None:
        code, out = await cli(env, "show", workflow_id, "--json")
        view: dict[str, Any] | None = json.loads(out) if code == 0 else None
        return view if view and view["state"] == "GREETED" else None

    shown = await eventually(greeted, within=90, every=0.5, what="hello workflow GREETED")
    assert shown["data"]["greeting"] == {"text": "Hello, Ada!"}
    assert [a["event_type"] for a in shown["audit"]] == ["START", "GREETED"]
    assert greeter.names == ["Ada"]
