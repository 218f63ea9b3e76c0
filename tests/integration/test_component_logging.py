"""Logs a person reads: ISO-8601 timestamps with their offset, no terminal colour codes in
log files, and none of FastStream's per-message chatter at the default level."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)
ISO_WITH_OFFSET = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d ")


def test_log_lines_start_with_an_iso_timestamp_and_its_offset() -> None:
    code = (
        "import logging\n"
        "from interlock.app.options import configure_logging\n"
        "configure_logging('INFO')\n"
        "logging.getLogger('interlock.test').warning('hello')\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    (line,) = ran.stderr.splitlines()
    assert ISO_WITH_OFFSET.match(line), line
    assert "hello" in line


_BROKER = """
import asyncio, logging, sys
import nats
from interlock.app import connections
from interlock.app.options import configure_logging
from interlock.app.runtime import Runtime
from interlock.config.settings import Settings

configure_logging("INFO")


async def main(url):
    stop = asyncio.Event()
    broker = connections.broker(Runtime(Settings(), url, None), "logging-test", stop)
    handled = asyncio.Event()

    @broker.subscriber("logging.test")
    async def handle(body: str) -> None:
        handled.set()

    await broker.start()
    # What FastStream's subscriber supervisor says each time a consuming task ends.
    broker.config.logger.log("callback for Task-1 is being executed...", log_level=logging.INFO)
    nc = await nats.connect(url)
    await nc.publish("logging.test", b"x")
    await nc.flush()
    await asyncio.wait_for(handled.wait(), 10)
    await nc.close()
    stop.set()  # before the broker stops, or its closed connection exits the process
    await broker.stop()


asyncio.run(main(sys.argv[1]))
"""


def test_a_components_broker_logs_no_colours_and_no_per_message_lines(nats_url: str) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", _BROKER, nats_url],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    written = ran.stdout + ran.stderr
    assert ran.returncode == 0, written
    assert "\x1b[" not in written
    assert "is being executed" not in written
    assert "Received" not in written
