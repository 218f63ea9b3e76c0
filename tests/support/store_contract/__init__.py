"""The workflow store's contract, one suite for every implementation of the port.

A test module subclasses `StoreContract` and provides three fixtures: `store` (a fresh, empty
`WorkflowStore`), `records` (reads back what the store wrote besides checkpoints) and
`cut_off` (makes the store's database unreachable). The in-memory store runs it in the unit
tier, PostgreSQL in the integration tier, so the double fails exactly where PostgreSQL fails.
"""

from __future__ import annotations

from tests.support.store_contract.common import CutOff, StoreRecords
from tests.support.store_contract.history import HistoryContract
from tests.support.store_contract.refusals import RefusalsContract
from tests.support.store_contract.tenants import TenantsContract
from tests.support.store_contract.writes import WritesContract

__all__ = ["CutOff", "StoreContract", "StoreRecords"]


class StoreContract(WritesContract, RefusalsContract, TenantsContract, HistoryContract):
    """The whole contract; a test module subclasses it and provides the fixtures."""
