"""No `Any` in a public signature: every function, class, method, property and field the
public namespaces export is typed with what it takes and gives (`object`, a JSON alias, a
model), so a plugin author's type checker checks their calls instead of waving them through.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.public_api import NAMESPACES

INHERITED_FROM_LIBRARIES = ("pydantic", "builtins", "typing", "abc", "enum")
"""What a public class inherits from these is the library's surface, not ours."""

DESCRIBED: tuple[type, ...] = (property, classmethod, staticmethod)


def _mentions_any(hint: object) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _mentions_any(typing.get_args(hint)[0])
    return any(_mentions_any(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)


def _hints(obj: object) -> dict[str, object]:
    target = obj.fget if isinstance(obj, property) else obj
    if isinstance(target, classmethod | staticmethod):
        target = target.__func__
    return typing.get_type_hints(target, include_extras=True)


def _members(cls: type) -> Iterator[tuple[str, object]]:
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] in INHERITED_FROM_LIBRARIES:
            continue
        yield f"{klass.__qualname__} fields", klass
        for name, member in vars(klass).items():
            if name.startswith("_") and name not in {"__init__", "__call__"}:
                continue
            if inspect.isfunction(member) or isinstance(
                member, property | classmethod | staticmethod
            ):
                yield f"{klass.__qualname__}.{name}", member


def _public_signatures() -> Iterator[tuple[str, object]]:
    seen: set[int] = set()
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            value = getattr(module, name)
            if id(value) in seen:
                continue
            seen.add(id(value))
            if inspect.isclass(value):
                yield from ((f"{namespace}.{where}", m) for where, m in _members(value))
            elif inspect.isroutine(value):
                yield f"{namespace}.{name}", value


SIGNATURES = sorted(_public_signatures(), key=lambda item: item[0])


@pytest.mark.parametrize(("where", "obj"), SIGNATURES, ids=[where for where, _ in SIGNATURES])
def test_no_public_signature_mentions_any(where: str, obj: Callable[..., object]) -> None:
    with_any = sorted(
        name
        for name, hint in _hints(obj).items()
        if not name.startswith("_") and _mentions_any(hint)
    )
    assert with_any == [], f"{where}: {with_any} typed with Any"
