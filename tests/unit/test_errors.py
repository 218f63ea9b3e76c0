"""One error hierarchy: everything Interlock raises on purpose derives from `InterlockError` and
says, as properties of its class, what it is (a stable code) and whether retrying can help."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import asyncpg
import pytest

import interlock
from interlock.contracts.errors import ErrorCode, InterlockError, TransientError
from interlock.projector.errors import schema_missing

ABSTRACT = {InterlockError, TransientError}

NOT_OURS = ("interlock.simulators",)
"""The simulators stand in for outside systems: what they raise is theirs, not Interlock's."""

NOT_IMPORTABLE = ("interlock.__main__", ".migrations")
"""Modules that act when imported: the CLI entry point, and Alembic's environment."""


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(interlock.__path__, "interlock.")]
    return sorted(
        name
        for name in names
        if not name.startswith(NOT_OURS) and not any(part in name for part in NOT_IMPORTABLE)
    )


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for name in _modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == name:
                found.append(obj)
    return found


ERRORS = _exception_classes()
CONCRETE = [cls for cls in ERRORS if cls not in ABSTRACT]


def test_the_walk_finds_the_errors_of_every_layer() -> None:
    modules = {cls.__module__ for cls in ERRORS}
    assert {
        "interlock.contracts.errors",
        "interlock.projector.errors",
        "interlock.relay.errors",
        "interlock.services.errors",
        "interlock.messaging.errors",
        "interlock.config.errors",
        "interlock.ops.errors",
        "interlock.app.errors",
        "interlock.client.errors",
        "interlock.console.errors",
        "interlock.tools.errors",
    } <= modules


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_each_layer_keeps_its_errors_in_its_errors_module(cls: type[BaseException]) -> None:
    assert cls.__module__.endswith(".errors"), f"move {cls.__name__} to its layer's errors.py"


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_interlock_error_derives_from_interlock_error(cls: type[BaseException]) -> None:
    assert issubclass(cls, InterlockError)


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_error_declares_its_code_and_retryability(cls: type[InterlockError]) -> None:
    declared = vars(cls)
    assert isinstance(declared.get("code"), ErrorCode), "declare `code = ErrorCode.…`"
    assert isinstance(declared.get("retryable"), bool), "declare `retryable = True|False`"


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_exactly_the_retryable_errors_are_transient(cls: type[InterlockError]) -> None:
    assert cls.retryable == issubclass(cls, TransientError)


def test_one_class_per_name() -> None:
    names = [cls.__name__ for cls in ERRORS]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_no_error_code_is_left_unused() -> None:
    used = {vars(cls)["code"] for cls in CONCRETE}
    assert set(ErrorCode) - used == set()


def test_an_undefined_table_however_wrapped_is_a_missing_schema() -> None:
    driver = asyncpg.exceptions.UndefinedTableError('relation "workflows" does not exist')
    try:
        try:
            raise driver
        except asyncpg.exceptions.UndefinedTableError as exc:
            raise RuntimeError("translated") from exc
    except RuntimeError as wrapped:
        grouped = ExceptionGroup("task group", [ValueError("other"), wrapped])

    missing = schema_missing(grouped)

    assert missing is not None
    assert missing.code is ErrorCode.CONFIGURATION
    assert "interlock migrate" in str(missing)
    assert schema_missing(RuntimeError("no table involved")) is None
