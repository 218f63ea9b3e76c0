"""The public API: `interlock` (authoring), `interlock.errors`, `interlock.definition`,
`interlock.adapters.http`, `interlock.testing` and `interlock.client`.

interlock/__init__.py lists its lazy names once (`_EXPORTS`, name -> module); the imports a
type checker reads must repeat exactly that table (a name missing there is invisible to
mypy), `__all__` is derived from it, and every name must load from the module the type
checker reads. A name that moved to another namespace still loads from `interlock`, with a
`DeprecationWarning` naming its new place.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

import interlock
from tests.support.public_api import NAMESPACES

INIT = Path(interlock.__file__)


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(INIT.read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    imports: dict[str, str] = {}
    for node in ast.walk(block):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.asname == alias.name, f"re-export {alias.name} as {alias.name}"
                imports[alias.name] = node.module or ""
    return imports


def _namespace(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_the_type_checked_imports_are_the_table() -> None:
    assert _type_checking_imports() == interlock._EXPORTS


def test_all_is_the_table() -> None:
    assert sorted(interlock.__all__) == sorted(interlock._EXPORTS)
    assert len(interlock.__all__) == len(set(interlock.__all__))


def test_every_public_name_loads_from_the_module_the_type_checker_reads() -> None:
    for name, module in interlock._EXPORTS.items():
        assert getattr(interlock, name) is getattr(importlib.import_module(module), name), name


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_name_a_namespace_exports_resolves(namespace: str) -> None:
    module = _namespace(namespace)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


def test_a_moved_name_is_in_the_namespace_it_moved_to_and_no_longer_exported() -> None:
    for name, namespace in interlock._MOVED.items():
        assert name in _namespace(namespace).__all__, name
        assert name not in interlock._EXPORTS, name


@pytest.mark.parametrize("name", sorted(interlock._MOVED))
def test_a_moved_name_still_loads_from_interlock_with_a_warning_naming_its_new_place(
    name: str,
) -> None:
    namespace = interlock._MOVED[name]
    with pytest.warns(DeprecationWarning, match=rf"`{namespace}\.{name}`"):
        value = getattr(interlock, name)
    assert value is getattr(_namespace(namespace), name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = interlock.no_such_name  # type: ignore[attr-defined]


def test_every_error_a_user_may_catch_is_in_interlock_errors() -> None:
    errors = _namespace("interlock.errors")
    for namespace in NAMESPACES:
        if namespace == "interlock.errors":
            continue
        exported = _namespace(namespace).__all__
        raised = [
            name
            for name in exported
            if isinstance(value := getattr(_namespace(namespace), name), type)
            and issubclass(value, BaseException)
            and name not in errors.__all__
        ]
        assert raised == [], f"{namespace} exports errors that interlock.errors does not"


def test_the_shipped_plugins_and_examples_import_no_moved_name_from_interlock() -> None:
    root = INIT.parent.parent
    sources = [
        path
        for folder in ("workflows", "examples", "tests/fixtures/plugins")
        for path in (root / folder).rglob("*.py")
    ]
    stale = sorted(
        f"{path.relative_to(root)}: {alias.name}"
        for path in sources
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "interlock"
        for alias in node.names
        if alias.name in interlock._MOVED
    )
    assert stale == []
