"""The layering the architecture promises, checked on every test run.

Every room has an allow-list contract in pyproject.toml (`lint-imports`): what it may import,
everything else refused. So contracts and the transition engine import no I/O library, the
projector reaches the stage services' package neither directly nor through a shared consumer,
nothing but the root, the tools and the tests imports a simulator, nothing but the root and
the tests imports a tool or a stage, and no import cycle joins two modules or packages of one
package, lazy imports included. The tests below also show that the contract type refuses what
it should, and that no room or module escapes a contract.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

import grimp
import pytest

from tests.support.import_contracts import AllowedImportsContract

ROOT = Path(__file__).resolve().parents[2]
IO_LIBRARIES = {"sqlalchemy", "asyncpg", "nats", "faststream", "opentelemetry"}
CONTRACTS: list[dict[str, Any]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "importlinter"
]["contracts"]


def _imported_roots(package: Path) -> set[str]:
    roots: set[str] = set()
    for module in package.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Import):
                roots |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots.add(node.module.split(".")[0])
    return roots


def test_contracts_and_the_engine_import_no_io_library() -> None:
    """The same promise, read straight from the source (independent of the linter)."""
    for package in (ROOT / "contracts", ROOT / "projector" / "engine"):
        assert not (_imported_roots(package) & IO_LIBRARIES), package


# --- the allow-list contract type -----------------------------------------------------------


def _graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    """A graph of the package `app` (every ancestor a module too) and external packages."""
    graph = grimp.ImportGraph()
    for importer, imported in imports:
        for module in (importer, imported):
            if module.startswith("app"):
                parts = module.split(".")
                for depth in range(1, len(parts) + 1):
                    graph.add_module(".".join(parts[:depth]))
            else:
                graph.add_module(module, is_squashed=True)
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents="")
    return graph


def _refused(graph: grimp.ImportGraph, **options: Any) -> list[tuple[str, str]]:
    contract = AllowedImportsContract("room", {"root_packages": ["app"]}, options)
    check = contract.check(graph, verbose=False)
    refused = [(r.importer, r.imported) for r in check.metadata["refused"]]
    assert check.kept == (not refused)
    return refused


def test_a_room_may_import_only_what_its_list_names() -> None:
    graph = _graph(("app.a.x", "app.b"), ("app.a.x", "app.c"), ("app.a.x", "requests"))
    refused = _refused(graph, source_modules=["app.a"], allowed_modules=["app.b"])
    assert refused == [("app.a.x", "app.c"), ("app.a.x", "requests")]


def test_the_standard_library_and_the_rooms_own_package_are_always_allowed() -> None:
    graph = _graph(("app.a.x", "app.a.y"), ("app.a.x", "asyncio"), ("app.a.x", "__future__"))
    assert _refused(graph, source_modules=["app.a"], allowed_modules=[]) == []


def test_a_new_package_beside_the_listed_ones_is_refused_by_default() -> None:
    graph = _graph(
        ("app.services.runtime", "app.services.ports"),
        ("app.services.runtime", "app.services.new_stage"),
    )
    refused = _refused(
        graph,
        source_modules=["app.services.runtime", "app.services.ports"],
        allowed_modules=["app.services.ports"],
    )
    assert refused == [("app.services.runtime", "app.services.new_stage")]


def test_an_excluded_package_is_neither_governed_nor_part_of_the_rooms_own_package() -> None:
    graph = _graph(("app.core", "app.plugin.x"), ("app.plugin.x", "requests"))
    refused = _refused(
        graph, source_modules=["app"], exclude_modules=["app.plugin"], allowed_modules=[]
    )
    assert refused == [("app.core", "app.plugin.x")]


def test_one_stage_may_not_import_another() -> None:
    graph = _graph(
        ("app.stages.one.a", "app.stages.one.b"), ("app.stages.two.a", "app.stages.one.b")
    )
    refused = _refused(graph, source_modules=["app.stages.*"], allowed_modules=[])
    assert refused == [("app.stages.two.a", "app.stages.one.b")]


def test_an_internal_module_that_does_not_exist_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match=r"app\.typo"):
        _refused(_graph(("app.a", "app.b")), source_modules=["app.a"], allowed_modules=["app.typo"])


# --- every room is under a contract -----------------------------------------------------------


def _allowed_contracts() -> list[dict[str, Any]]:
    return [c for c in CONTRACTS if c["type"] == "allowed"]


def _expand(graph: grimp.ImportGraph, expressions: list[str]) -> set[str]:
    found: set[str] = set()
    for expression in expressions:
        heads = graph.find_matching_modules(expression) if "*" in expression else {expression}
        for head in heads:
            found |= {head, *graph.find_descendants(head)}
    return found


def test_every_module_is_governed_by_an_allow_list() -> None:
    graph = grimp.build_graph("interlock", cache_dir=None)
    governed: set[str] = set()
    for contract in _allowed_contracts():
        members = _expand(graph, contract["source_modules"])
        governed |= members - _expand(graph, contract.get("exclude_modules", []))
    assert sorted(graph.modules - governed) == []


def test_every_room_has_a_contract_of_its_own() -> None:
    """A room is a top-level folder linked into interlock/: the root's contract must leave it
    to a contract of its own, so the root imports it only once it is listed."""
    rooms = {f"interlock.{p.name}" for p in (ROOT / "interlock").iterdir() if p.is_symlink()}
    (root,) = [c for c in _allowed_contracts() if c["source_modules"] == ["interlock"]]
    sources = {s for c in _allowed_contracts() for s in c["source_modules"]}
    for room in sorted(rooms):
        assert room in root["exclude_modules"] or f"{room}.*" in root["exclude_modules"], room
        assert any(s == room or s.startswith(f"{room}.") for s in sources), room


def test_import_cycles_are_forbidden_everywhere() -> None:
    (acyclic,) = [c for c in CONTRACTS if c["type"] == "acyclic_siblings"]
    assert acyclic["ancestors"] == ["interlock"]
    assert "depth" not in acyclic
    assert "skip_descendants" not in acyclic
