"""Waiting until a probed value satisfies a predicate, on top of `polling.eventually`.

`eventually` returns the first truthy result; `until` serves the waits whose value may well
be falsy when reached (a lag of 0, an empty list, `None`), and returns that value.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from tests.support.polling import eventually

T = TypeVar("T")


@dataclass(frozen=True)
class _Checked(Generic[T]):
    """A probed value, truthy when it satisfied the predicate; shown as the value alone."""

    value: T
    satisfied: bool

    def __bool__(self) -> bool:
        return self.satisfied

    def __repr__(self) -> str:
        return repr(self.value)


async def until(
    probe: Callable[[], Awaitable[T]], done: Callable[[T], bool], within: float = 5.0
) -> T:
    """Poll `probe` until `done(result)`; fail with the last result after `within` seconds."""

    async def checked() -> _Checked[T]:
        value = await probe()
        return _Checked(value, done(value))

    return (await eventually(checked, within=within)).value
