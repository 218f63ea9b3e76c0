"""httpcore asks which async library runs it on every request (`import sniffio`); without the
package installed, each ask searched the import path and failed (~60 us a call, a third of the
time a model call or an HTTP effect spends in the client outside the network). It is a
dependency, so the ask is answered from the modules already loaded."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from httpcore._synchronization import current_async_library


class _Lookups(importlib.abc.MetaPathFinder):
    """Records every module the import system searches for (and finds nothing itself)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        self.names.append(fullname)
        return None


async def test_asking_for_the_async_library_searches_for_no_module() -> None:
    current_async_library()  # the first ask may load it
    lookups = _Lookups()
    sys.meta_path.insert(0, lookups)
    try:
        for _ in range(3):
            assert current_async_library() == "asyncio"
    finally:
        sys.meta_path.remove(lookups)
    assert lookups.names == []
