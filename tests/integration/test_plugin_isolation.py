"""A broken plugin is isolated: `--help`, `workflows` and `up` run the other plugins and name
the broken one in one line (`workflows` lists the others and exits 2); a command that needs it
exits 2 with that line.

Two distributions are "installed" by writing their metadata (`*.dist-info` with an
`entry_points.txt`) into a directory the CLI gets on its path: one whose entry point fails to
import, one whose definition fails the graph check (the hello plugin with a row into a state
it never declares).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import cli_env, interlock_up, run_cli

pytestmark = pytest.mark.timeout(180)
HELLO = Path(__file__).parents[1] / "fixtures" / "plugins" / "hello"

UNIMPORTABLE = 'raise ImportError("no module named greeting_sdk")\n'
GRAPH_BROKEN = """\
import dataclasses

import hello_workflow as hello

_wf = hello.definition()
_wf.on("GREETING", "GREETED", "NOWHERE")
PLUGIN = dataclasses.replace(hello.PLUGIN, definitions=(_wf.build(),))
"""


def _distribution(site: Path, name: str, entry_point: str, module: str, source: str) -> None:
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[interlock.workflows]\n{entry_point} = {module}:PLUGIN\n"
    )
    (site / f"{module}.py").write_text(source)


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("broken-plugins")
    _distribution(site, "broken-import", "unimportable", "unimportable_plugin", UNIMPORTABLE)
    _distribution(site, "broken-graph", "hello", "graph_broken_plugin", GRAPH_BROKEN)
    return site


def _path(site: Path) -> str:
    """The broken plugin and hello on the path, before the caller's (how a checkout under test
    is imported)."""
    return os.pathsep.join(filter(None, (str(site), str(HELLO), os.environ.get("PYTHONPATH"))))


def _env(home: Path, site: Path, **env: str) -> dict[str, str]:
    return cli_env(home, PYTHONPATH=_path(site), **env)


def _interlock(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(env, *args, timeout=90)


def _names_both_broken_plugins_once(output: str) -> None:
    """One line for each broken plugin, naming it and its problem; no traceback."""
    assert "Traceback" not in output, output
    unimportable = [line for line in output.splitlines() if "plugin unimportable" in line]
    graph = [line for line in output.splitlines() if "plugin hello" in line]
    assert len(unimportable) == 1, output
    assert "no module named greeting_sdk" in unimportable[0]
    assert len(graph) == 1, output
    assert "NOWHERE" in graph[0]


def test_help_works_and_names_each_broken_plugin_in_one_line(
    tmp_path: Path, broken_site: Path
) -> None:
    done = _interlock(_env(tmp_path, broken_site), "--help")

    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout
    _names_both_broken_plugins_once(done.stderr)


def test_workflows_lists_the_others_and_names_the_broken(tmp_path: Path, broken_site: Path) -> None:
    done = _interlock(_env(tmp_path, broken_site), "workflows", "--json")

    assert done.returncode == 2, done.stderr  # listed, but not the installation meant
    report = json.loads(done.stdout)
    listed = {w["type"] for w in report["workflows"]}
    assert {"support", "request"} <= listed
    assert "hello" not in listed
    assert {r["plugin"] for r in report["refused"]} == {"unimportable", "hello"}
    _names_both_broken_plugins_once(done.stderr)


@pytest.mark.parametrize(
    ("args", "plugin"),
    [
        (("graph", "hello"), "plugin hello"),
        (("service", "hello.greet"), "plugin hello"),
        (("service", "unimportable.stage"), "plugin unimportable"),
    ],
)
def test_a_command_needing_a_broken_plugin_exits_2_naming_it(
    tmp_path: Path, broken_site: Path, args: tuple[str, ...], plugin: str
) -> None:
    done = _interlock(_env(tmp_path, broken_site), *args)

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert plugin in errors[0]


def test_up_runs_the_other_plugins_and_names_the_broken(
    tmp_path: Path, broken_site: Path, nats_url: str, database_url: str
) -> None:
    env = {"INTERLOCK_NATS_URL": nats_url, "INTERLOCK_DATABASE_URL": database_url}
    settings = {"PYTHONPATH": _path(broken_site), **env}

    with interlock_up(tmp_path / "home", "projector", "relay", **settings) as printed:
        listed = _interlock(_env(tmp_path / "home", broken_site, **env), "list", "--json")

    _names_both_broken_plugins_once(printed)
    assert "Ctrl-C stops everything" in printed
    assert listed.returncode == 0, listed.stderr
