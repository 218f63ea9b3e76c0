"""`interlock graph` and the diagram it prints: every row of the table is an edge label, the
states are marked by kind, and an unknown type or version is named with the valid ones."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from interlock.cli import app
from interlock.config.plugins import installed
from interlock.contracts.diagram import diagram, dot, mermaid, row_label
from interlock.contracts.graphcheck import targets
from interlock.definition import WorkflowDefinition
from interlock.workflows.support.definition import SUPPORT_V1, SUPPORT_V2, SUPPORT_V3
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.unit
DEFINITIONS = list(REGISTRY)
INSTALLED = ", ".join(installed().registry.workflow_types())


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: f"{d.workflow_type}-v{d.version}")
def test_every_row_labels_an_edge_to_each_state_it_can_reach(
    definition: WorkflowDefinition,
) -> None:
    edges = {(e.source, e.target): e.labels for e in diagram(definition).edges}
    for row in definition.transitions:
        for target in targets(definition, row):
            assert row_label(row) in edges[(row.source, target)]


def test_guards_and_limits_appear_in_the_labels() -> None:
    edges = {(e.source, e.target): e.labels for e in diagram(SUPPORT_V2).edges}
    assert "APPROVED [approval_valid]" in edges[("AWAITING_APPROVAL", "EXECUTING_ACTION")]
    revise = edges[("AWAITING_APPROVAL", "GENERATING_RECOMMENDATION")]
    assert "CHANGES_REQUESTED [reviewer_current] ≤2 revisions" in revise


def test_states_are_marked_by_kind() -> None:
    kinds = {n.name: n.kinds for n in diagram(SUPPORT_V2).nodes}
    assert "effect" in kinds["EXECUTING_ACTION"]
    assert "waiting" in kinds["AWAITING_APPROVAL"]
    assert {"waiting", "review"} <= kinds["MANUAL_REVIEW"]
    assert "terminal" in kinds["COMPLETED"]
    assert "initial" in kinds["REQUEST_RECEIVED"]
    assert "parallel" in kinds["GATHERING_EVIDENCE"]
    assert kinds["CLASSIFYING"] == frozenset()


def test_mermaid_shapes_and_classes_follow_the_kinds() -> None:
    text = mermaid(diagram(SUPPORT_V1))
    ids = dict(re.findall(r'^\s+(s\d+)\S*?"([A-Z_]+)"', text, re.MULTILINE))
    by_name = {name: node_id for node_id, name in ids.items()}
    assert f'{by_name["COMPLETED"]}((("COMPLETED")))' in text
    assert f'{by_name["EXECUTING_ACTION"]}[["EXECUTING_ACTION"]]' in text
    assert f'{by_name["AWAITING_APPROVAL"]}(["AWAITING_APPROVAL"])' in text
    effect = re.search(r"^\s+class (\S+) effect$", text, re.MULTILINE)
    assert effect is not None
    assert effect.group(1) == by_name["EXECUTING_ACTION"]
    assert text.startswith("---\ntitle: support v1\n---\nflowchart TD\n")


def test_mermaid_ids_survive_state_names_that_are_keywords() -> None:
    renamed = SUPPORT_V1.model_copy(
        update={"states": (*SUPPORT_V1.states, "end"), "terminal_states": frozenset({"end"})}
    )
    text = mermaid(diagram(renamed))
    assert re.search(r'^\s+s\d+\(\(\("end"\)\)\)$', text, re.MULTILINE)
    assert not re.search(r"^\s+end\b", text, re.MULTILINE)


def test_dot_is_one_digraph_with_a_statement_per_state_and_edge() -> None:
    d = diagram(SUPPORT_V2)
    text = dot(d)
    assert text.startswith('digraph "support_v2" {')
    assert text.rstrip().endswith("}")
    assert text.count(" -> ") == len(d.edges)
    assert '"EXECUTING_ACTION" [label="EXECUTING_ACTION", style="filled,bold"' in text
    assert '"COMPLETED" [label="COMPLETED", shape="doublecircle"]' in text
    assert '"APPROVED [approval_valid]"' in text


def test_graph_prints_the_latest_version_by_default() -> None:
    result = CliRunner().invoke(app, ["graph", "support"])
    assert result.exit_code == 0, result.output
    assert result.stdout == mermaid(diagram(SUPPORT_V3))


def test_graph_prints_an_older_version_as_dot() -> None:
    result = CliRunner().invoke(app, ["graph", "support", "--version", "1", "--format", "dot"])
    assert result.exit_code == 0, result.output
    assert result.stdout == dot(diagram(SUPPORT_V1))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # whatever plugins this environment has installed (the invoice example, say) are listed
        (["graph", "payroll"], f"unknown workflow type 'payroll'; one of: {INSTALLED}"),
        (["graph", "support", "--version", "7"], "support has no version 7; one of: 1, 2, 3"),
        (["graph", "support", "--format", "png"], "unknown format 'png'; one of: mermaid, dot"),
    ],
)
def test_graph_refuses_what_is_not_installed_naming_the_valid_choices(
    arguments: list[str], message: str
) -> None:
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 2
    assert result.stderr.strip() == message
