"""A workflow definition as a diagram: its states, and one edge per pair of states that rows
connect, labelled with each row's event, guards and limit.

This is the one source `interlock graph` prints (Mermaid or Graphviz DOT) and the operator
console lays out as SVG, so what an operator sees is what the table says. Dynamic targets
(back to the retried state, back from manual review) are drawn to every state they can denote,
as the graph check reads them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from interlock.contracts.definition import Guard, Transition, WorkflowDefinition
from interlock.contracts.graphcheck import targets

Kind = Literal["initial", "terminal", "waiting", "effect", "review", "parallel"]
Format = Literal["mermaid", "dot"]
FORMATS: tuple[Format, ...] = ("mermaid", "dot")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Node(_Frozen):
    name: str
    kinds: frozenset[Kind] = frozenset()


class Edge(_Frozen):
    """Every row from `source` that can lead to `target`, in table order."""

    source: str
    target: str
    labels: tuple[str, ...]


class Diagram(_Frozen):
    workflow_type: str
    version: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


def diagram(definition: WorkflowDefinition) -> Diagram:
    """The states of `definition` (marked by kind) and the edges its rows make."""
    labels: dict[tuple[str, str], list[str]] = {}
    for row in definition.transitions:
        for target in sorted(targets(definition, row)):
            labels.setdefault((row.source, target), []).append(row_label(row))
    return Diagram(
        workflow_type=definition.workflow_type,
        version=definition.version,
        nodes=tuple(Node(name=s, kinds=kinds(definition, s)) for s in definition.states),
        edges=tuple(Edge(source=s, target=t, labels=tuple(ls)) for (s, t), ls in labels.items()),
    )


def row_label(row: Transition) -> str:
    """`EVENT [guard(param), …] ≤N counter`: what takes this row and what must hold."""
    label = row.event
    if row.guards:
        label += f" [{', '.join(guard_label(g) for g in row.guards)}]"
    if row.limit is not None:
        label += f" ≤{row.limit.max} {row.limit.counter}"
    return label


def guard_label(guard: Guard) -> str:
    if not guard.params:
        return guard.name
    return f"{guard.name}({', '.join(str(v) for v in guard.params.values())})"


def kinds(definition: WorkflowDefinition, state: str) -> frozenset[Kind]:
    found: set[Kind] = set()
    if state == definition.initial_state:
        found.add("initial")
    if state in definition.terminal_states:
        found.add("terminal")
    if state in definition.waiting_states:
        found.add("waiting")
    if state in definition.effect_states:
        found.add("effect")
    if state == definition.review_state:
        found.add("review")
    if definition.parallel_state(state) is not None:
        found.add("parallel")
    return frozenset(found)


def render(d: Diagram, fmt: Format) -> str:
    """The diagram as Mermaid (`flowchart`) or Graphviz DOT text."""
    return mermaid(d) if fmt == "mermaid" else dot(d)


_MERMAID_SHAPES: tuple[tuple[Kind, str, str], ...] = (
    ("terminal", "(((", ")))"),
    ("effect", "[[", "]]"),
    ("waiting", "([", "])"),
    ("parallel", "[/", "/]"),
)
_MERMAID_CLASSES: dict[Kind, str] = {
    "terminal": "stroke-width:3px",
    "effect": "fill:#fde2e1,stroke:#b42318",
    "waiting": "fill:#fef6e0,stroke:#b54708,stroke-dasharray:4 3",
    "initial": "fill:#e0f2fe,stroke:#026aa2",
}


def mermaid(d: Diagram) -> str:
    lines = [
        "---",
        f"title: {d.workflow_type} v{d.version}",
        "---",
        "flowchart TD",
    ]
    # Positional ids: a state may be named like a Mermaid keyword (`end`, `class`).
    ids = {node.name: f"s{i}" for i, node in enumerate(d.nodes)}
    for node in d.nodes:
        opening, closing = next(
            ((o, c) for kind, o, c in _MERMAID_SHAPES if kind in node.kinds), ("[", "]")
        )
        lines.append(f'    {ids[node.name]}{opening}"{node.name}"{closing}')
    for edge in d.edges:
        label = "<br/>".join(edge.labels).replace('"', "'")
        lines.append(f'    {ids[edge.source]} -->|"{label}"| {ids[edge.target]}')
    for kind, style in _MERMAID_CLASSES.items():
        members = [ids[n.name] for n in d.nodes if kind in n.kinds]
        if members:
            lines.append(f"    classDef {kind} {style}")
            lines.append(f"    class {','.join(members)} {kind}")
    return "\n".join(lines) + "\n"


def _dot_node(node: str, kinds: frozenset[Kind]) -> str:
    attributes = {"label": node}
    if "terminal" in kinds:
        attributes["shape"] = "doublecircle" if "initial" not in kinds else "box"
    if "effect" in kinds:
        attributes |= {"style": "filled,bold", "fillcolor": "#fde2e1", "color": "#b42318"}
    elif "waiting" in kinds:
        attributes |= {"style": "filled,dashed", "fillcolor": "#fef6e0", "color": "#b54708"}
    elif "initial" in kinds:
        attributes |= {"style": "filled", "fillcolor": "#e0f2fe"}
    if "parallel" in kinds:
        attributes["peripheries"] = "2"
    return f"  {_quoted(node)} [{_attributes(attributes)}];"


def dot(d: Diagram) -> str:
    lines = [
        f"digraph {_quoted(f'{d.workflow_type}_v{d.version}')} {{",
        f"  label={_quoted(f'{d.workflow_type} v{d.version}')};",
        "  rankdir=TB;",
        '  node [shape=box, style=rounded, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    lines += [_dot_node(node.name, node.kinds) for node in d.nodes]
    for edge in d.edges:
        label = {"label": "\n".join(edge.labels)}
        lines.append(f"  {_quoted(edge.source)} -> {_quoted(edge.target)} [{_attributes(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _attributes(values: dict[str, str]) -> str:
    return ", ".join(f"{k}={_quoted(v)}" for k, v in values.items())


def _quoted(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
