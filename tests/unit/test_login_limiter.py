"""The console's login limit: progressive delays per (name, client address) instead of a
lockout, nobody else slowed, a name over the bound refused without an entry, and memory bounded
by a fixed number of entries that are pruned when idle."""

from __future__ import annotations

import pytest

from interlock.console.limiter import MAX_NAME_LENGTH, LoginLimiter
from tests.support.console import ManualClock as Clock

pytestmark = pytest.mark.unit


def limiter(
    clock: Clock, *, cap: float = 30.0, max_entries: int = 10_000, forget_after: float = 3600.0
) -> LoginLimiter:
    return LoginLimiter(
        free=3, base=2.0, cap=cap, max_entries=max_entries, forget_after=forget_after, clock=clock
    )


def fail(limiter: LoginLimiter, times: int, name: str = "alice", address: str = "10.0.0.1") -> None:
    for _ in range(times):
        limiter.failed(name, address)


def test_failures_up_to_the_free_count_cost_no_wait() -> None:
    clock = Clock()
    limit = limiter(clock)
    fail(limit, 2)
    assert limit.retry_after("alice", "10.0.0.1") == 0


def test_each_further_failure_doubles_the_wait_up_to_the_cap() -> None:
    clock = Clock()
    limit = limiter(clock)
    waits = []
    for _ in range(8):
        limit.failed("alice", "10.0.0.1")
        waits.append(limit.retry_after("alice", "10.0.0.1"))
    assert waits == [0, 0, 2, 4, 8, 16, 30, 30]


def test_the_wait_runs_from_the_last_failure_and_then_the_name_may_be_tried_again() -> None:
    clock = Clock()
    limit = limiter(clock)
    fail(limit, 4)
    clock.now += 3
    assert limit.retry_after("alice", "10.0.0.1") == 1
    clock.now += 1
    assert limit.retry_after("alice", "10.0.0.1") == 0


def test_a_success_clears_the_failures() -> None:
    clock = Clock()
    limit = limiter(clock)
    fail(limit, 5)
    limit.succeeded("alice", "10.0.0.1")
    assert limit.retry_after("alice", "10.0.0.1") == 0
    assert len(limit) == 0


def test_neither_another_name_behind_the_same_address_nor_the_name_elsewhere_waits() -> None:
    clock = Clock()
    limit = limiter(clock)
    fail(limit, 10)
    assert limit.retry_after("alice", "10.0.0.1") > 0
    assert limit.retry_after("bob", "10.0.0.1") == 0
    assert limit.retry_after("alice", "10.0.0.2") == 0


def test_a_name_over_the_bound_leaves_no_entry() -> None:
    limit = limiter(Clock())
    fail(limit, 3, name="x" * (MAX_NAME_LENGTH + 1))
    assert len(limit) == 0


def test_entries_are_bounded_and_a_flood_of_failures_does_not_evict_a_counted_wait() -> None:
    """Failing 10,000 other names does not buy the guesser of `alice` a fresh count: entries
    not yet waiting are evicted first, the least recently failed first."""
    clock = Clock()
    limit = limiter(clock, max_entries=100)
    fail(limit, 5, name="alice")  # waits 8 s
    for n in range(10_000):
        clock.now += 0.0001
        limit.failed(f"name-{n}", "10.0.0.9")
    assert len(limit) == 100
    assert limit.retry_after("alice", "10.0.0.1") == pytest.approx(7.0)  # its wait kept
    assert limit.retry_after("name-9999", "10.0.0.9") == 0  # one failure: no wait, but kept
    fail(limit, 4, name="name-9999", address="10.0.0.9")
    assert limit.retry_after("name-9999", "10.0.0.9") > 0


def test_when_only_waits_are_left_the_least_recently_failed_is_evicted() -> None:
    clock = Clock()
    limit = limiter(clock, max_entries=100)
    fail(limit, 5, name="alice")
    for n in range(200):
        clock.now += 0.001
        fail(limit, 3, name=f"name-{n}", address="10.0.0.9")
    assert len(limit) == 100
    assert limit.retry_after("alice", "10.0.0.1") == 0  # the oldest wait, evicted
    assert limit.retry_after("name-199", "10.0.0.9") > 0


def test_entries_idle_past_the_forget_time_are_pruned() -> None:
    clock = Clock()
    limit = limiter(clock, forget_after=600.0)
    fail(limit, 10, name="alice")
    fail(limit, 1, name="bob")
    clock.now += 601
    limit.failed("carol", "10.0.0.1")
    assert len(limit) == 1
    assert limit.retry_after("alice", "10.0.0.1") == 0


def test_an_entry_is_never_forgotten_before_its_wait_is_over() -> None:
    clock = Clock()
    limit = limiter(clock, cap=900.0, forget_after=60.0)
    fail(limit, 20)
    clock.now += 120
    assert limit.retry_after("alice", "10.0.0.1") == 900 - 120


def test_addresses_of_one_ipv6_network_share_one_delay() -> None:
    """Every host of a /64 is one client's: rotating through its 2**64 addresses does not
    buy 5 free guesses each (an IPv4-mapped address is its IPv4 address)."""
    limit = LoginLimiter(free=2, base=4.0, cap=60.0, clock=Clock())
    for host in ("2001:db8:1:2::1", "2001:db8:1:2::2"):
        limit.failed("alice", host)
    limit.failed("bob", "::ffff:192.0.2.7")
    limit.failed("bob", "192.0.2.7")

    assert limit.retry_after("alice", "2001:db8:1:2:ffff::9") == 4.0
    assert limit.retry_after("alice", "2001:db8:1:3::1") == 0.0
    assert limit.retry_after("bob", "192.0.2.7") == 4.0
    assert limit.retry_after("bob", "192.0.2.8") == 0.0
    assert limit.retry_after("alice", "unknown") == 0.0


def test_with_the_limiter_full_of_waits_a_new_names_failures_still_count() -> None:
    clock = Clock()
    limit = limiter(clock, max_entries=10)
    for n in range(10):
        fail(limit, 3, name=f"name-{n}", address="10.0.0.9")
    fail(limit, 3, name="alice")
    assert len(limit) == 10
    assert limit.retry_after("alice", "10.0.0.1") > 0
