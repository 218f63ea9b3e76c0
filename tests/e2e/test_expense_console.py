"""The expense plugin approved from the console by clicking, in a real headless Chromium
(Debian's package, driven by Playwright), under `interlock up` with the simulated bank: the
approve form is the claim's own (the amount the task shows, bound in), and one click pays the
claim exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_expense_plugin import STAGES, Stack, banked
from tests.support.browser import CHROMIUM, approve_in_console
from tests.support.cli import cli_env, free_port, interlock_up

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


async def test_an_expense_claim_is_approved_in_the_browser_and_paid_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with banked() as (bank, adapters):
        with interlock_up(
            home,
            "projector",
            "relay",
            "timer",
            *STAGES,
            "console",
            INTERLOCK_CONSOLE_PORT=str(free_port()),
            INTERLOCK_ADAPTERS=adapters,
        ):
            stack = Stack(cli_env(home), bank)
            workflow_id = await stack.claim("Flight to Lisbon", "640.00")
            await stack.reaches(workflow_id, "AWAITING_APPROVAL")
            errors = await approve_in_console(
                home,
                tmp_path / "profile",
                workflow_id,
                ("amount", "640.00"),
                "APPROVED accepted: AWAITING_APPROVAL → PAYING",
            )
            paid = await stack.reaches(workflow_id, "PAID")
    assert errors == []
    assert len(stack.payments_of(workflow_id)) == 1
    approval = next(a for a in paid["audit"] if a["event_type"] == "APPROVED")
    # the development operator holds every role and signs with the largest limit's
    assert approval["actor"]["role"] == "finance_director"
