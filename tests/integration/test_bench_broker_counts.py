"""The bench reads the broker's counts through every seed URL it was given: a cluster's
INTERLOCK_NATS_URL is a comma-separated list, as each component accepts it."""

from __future__ import annotations

import uuid

import nats
import pytest

from interlock.tools.bench_servers import broker_counts

pytestmark = pytest.mark.timeout(60)


async def test_the_counts_are_read_through_a_list_of_seed_urls(
    stack_urls: tuple[str, str],
) -> None:
    one = stack_urls[0]
    name = f"BENCH_COUNTS_{uuid.uuid4().hex[:8].upper()}"
    nc = await nats.connect(one)
    js = nc.jetstream()
    try:
        await js.add_stream(name=name, subjects=[f"{name.lower()}.>"])
        for n in range(3):
            await js.publish(f"{name.lower()}.x", str(n).encode())
        _, streams = await broker_counts(f"{one},{one}", 1)
        assert streams[name] == (3, 3)
    finally:
        await js.delete_stream(name)
        await nc.close()
