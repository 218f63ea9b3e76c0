"""Lays out a workflow's diagram (`contracts.diagram`, the source `interlock graph` prints)
as layers for an SVG drawn server-side: no script, no network.

States are ranked by the longest path from the initial state over the table's forward edges
(an edge back to a state already on the path is a loop, drawn on the side), terminal states
share the last layer, and each layer is ordered by the mean position of its predecessors so
the main flow runs straight down.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from interlock.contracts.diagram import Diagram, Edge, Node

NODE_HEIGHT = 30
LAYER_GAP = 62
NODE_GAP = 26
CHAR_WIDTH = 7.2
PADDING = 18
MARGIN = 24


@dataclass(frozen=True)
class Box:
    node: Node
    x: float
    y: float
    width: float

    @property
    def center(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class Line:
    edge: Edge
    path: str
    taken: bool
    label_x: float
    label_y: float


@dataclass(frozen=True)
class Drawing:
    width: float
    height: float
    boxes: list[Box]
    lines: list[Line]
    current: str | None


def _ranks(d: Diagram) -> dict[str, int]:
    successors: dict[str, list[str]] = defaultdict(list)
    for edge in d.edges:
        if edge.source != edge.target:
            successors[edge.source].append(edge.target)
    order = [n.name for n in d.nodes]
    back: set[tuple[str, str]] = set()
    on_path: set[str] = set()
    seen: set[str] = set()

    def visit(state: str) -> None:
        seen.add(state)
        on_path.add(state)
        for nxt in successors[state]:
            if nxt in on_path:
                back.add((state, nxt))
            elif nxt not in seen:
                visit(nxt)
        on_path.discard(state)

    for state in order:
        if state not in seen:
            visit(state)
    rank = dict.fromkeys(order, 0)
    for _ in order:  # longest path over the forward edges (acyclic once loops are removed)
        for source in order:
            for target in successors[source]:
                if (source, target) not in back:
                    rank[target] = max(rank[target], rank[source] + 1)
    terminals = {n.name for n in d.nodes if "terminal" in n.kinds}
    last = max((r for s, r in rank.items() if s not in terminals), default=0) + 1
    return {s: (last if s in terminals else r) for s, r in rank.items()}


def _layers(d: Diagram, rank: dict[str, int]) -> list[list[Node]]:
    layers: list[list[Node]] = [[] for _ in range(max(rank.values(), default=0) + 1)]
    for node in d.nodes:
        layers[rank[node.name]].append(node)
    predecessors: dict[str, list[str]] = defaultdict(list)
    for edge in d.edges:
        if rank[edge.source] < rank[edge.target]:
            predecessors[edge.target].append(edge.source)
    for _ in range(3):
        position = {n.name: i for layer in layers for i, n in enumerate(layer)}
        for layer in layers[1:]:
            layer.sort(key=lambda n: _mean([position[p] for p in predecessors[n.name]]))
    return [layer for layer in layers if layer]


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 1e9


def layout(d: Diagram, taken: set[tuple[str, str]], current: str | None) -> Drawing:
    """Boxes and curves for `d`; edges in `taken` (source, target) are the path walked."""
    layers = _layers(d, _ranks(d))
    widths = {n.name: len(n.name) * CHAR_WIDTH + 2 * PADDING for layer in layers for n in layer}
    row_widths = [
        sum(widths[n.name] for n in layer) + NODE_GAP * (len(layer) - 1) for layer in layers
    ]
    width = max(row_widths, default=0) + 2 * MARGIN + 120  # room for loops on the right
    boxes: dict[str, Box] = {}
    for i, layer in enumerate(layers):
        x = (width - 120 - row_widths[i]) / 2
        for node in layer:
            boxes[node.name] = Box(node, x, MARGIN + i * LAYER_GAP, widths[node.name])
            x += widths[node.name] + NODE_GAP
    height = MARGIN * 2 + (len(layers) - 1) * LAYER_GAP + NODE_HEIGHT
    lines = [_line(e, boxes, (e.source, e.target) in taken) for e in d.edges]
    # Taken edges last, so they are drawn on top.
    lines.sort(key=lambda line: line.taken)
    return Drawing(width, height, list(boxes.values()), lines, current)


def _line(edge: Edge, boxes: dict[str, Box], taken: bool) -> Line:
    a, b = boxes[edge.source], boxes[edge.target]
    if a is b:
        x, y = a.x + a.width, a.y + NODE_HEIGHT / 2
        path = _curve((x, y - 7), (x + 34, y - 22), (x + 34, y + 22), (x, y + 7))
        return Line(edge, path, taken, x + 30, y)
    if b.y > a.y:  # downwards: bottom of the source to the top of the target
        x1, y1, x2, y2 = a.center, a.y + NODE_HEIGHT, b.center, b.y
        bend = (y2 - y1) / 2
        path = _curve((x1, y1), (x1, y1 + bend), (x2, y2 - bend), (x2, y2))
        return Line(edge, path, taken, (x1 + x2) / 2, (y1 + y2) / 2)
    # Upwards or sideways: a loop out to the right of both boxes.
    x1, y1 = a.x + a.width, a.y + NODE_HEIGHT / 2
    x2, y2 = b.x + b.width, b.y + NODE_HEIGHT / 2
    reach = max(x1, x2) + 40 + abs(y1 - y2) * 0.15
    path = _curve((x1, y1), (reach, y1), (reach, y2), (x2, y2))
    return Line(edge, path, taken, reach - 10, (y1 + y2) / 2)


def _curve(*points: tuple[float, float]) -> str:
    """An SVG cubic Bézier path: from the first point, with two control points, to the last."""
    (x0, y0), *rest = points
    return f"M{x0:.1f},{y0:.1f} C" + " ".join(f"{x:.1f},{y:.1f}" for x, y in rest)


def taken_edges(audit: list[dict[str, object]]) -> set[tuple[str, str]]:
    """(from, to) of every accepted transition in an audit trail."""
    return {
        (str(a["from_state"]), str(a["to_state"]))
        for a in audit
        if a.get("accepted") and a.get("from_state") and a.get("to_state")
    }
