"""The public namespace is spelled three times in interlock/__init__.py — the imports a type
checker reads, `__all__`, and the lazy-loading table — and the three must say the same: a
name in one and not another is either invisible to mypy, missing from `import *`, or an
AttributeError at first use."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import interlock

INIT = Path(interlock.__file__)


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(INIT.read_text())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: node.module or ""
        for node in ast.walk(block)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_type_checked_imports_and_all_name_the_same_names() -> None:
    assert set(_type_checking_imports()) == set(interlock.__all__)


def test_every_public_name_loads_from_the_module_the_type_checker_reads() -> None:
    imports = _type_checking_imports()
    where: dict[str, str] = interlock._MODULE_OF
    assert set(where) == set(interlock.__all__)
    for name, module in imports.items():
        assert where[name] == module, name
        assert getattr(interlock, name) is getattr(importlib.import_module(module), name)


def test_all_has_no_name_twice() -> None:
    assert len(interlock.__all__) == len(set(interlock.__all__))
