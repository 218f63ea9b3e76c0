"""What can be a stored tenant, workflow or event id: a read naming anything else is answered
"no such" without asking the database (which refuses a NUL in text)."""

from __future__ import annotations

import pytest

from interlock.contracts.envelope import MAX_IDENTIFIER, is_identifier

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("value", ["acme", "wf-1", "gw-tickets-msg_2a", "x" * MAX_IDENTIFIER, "é"])
def test_an_id_of_printable_characters_within_the_bound_can_be_stored(value: str) -> None:
    assert is_identifier(value)


@pytest.mark.parametrize("value", ["", "a\x00b", "a\nb", "\x7f", "x" * (MAX_IDENTIFIER + 1)])
def test_an_empty_overlong_or_control_bearing_id_cannot(value: str) -> None:
    assert not is_identifier(value)
