"""The finance system and notifier simulators the invoice stages call by default.

Their state is one SQLite ledger file under the installation's home (`AdapterContext.home`):
the stage services are separate processes, so a ledger kept in one process's memory would
let validation miss what posting recorded and would count postings per process. SQLite's
transactions make "post once per invoice_id" hold across processes with no server to run.

Faults are injected by the invoice itself, so a scenario drives them from the document alone
whatever process serves the call: an invoice number ending in ``~<fault>`` (``~`` can end no
real number the contract's suppliers issue) asks for

- ``lose-response``: the first posting is recorded but its answer is lost (a timeout);
- ``timeout-once``: the first posting times out before it reaches the ledger;
- ``notify-fails``: every notification of the invoice fails (the system is unavailable);
- ``unanswered``: every posting is lost before it reaches the ledger, until healed;
- ``answers-lost``: every posting is recorded but its answer lost, and every lookup of it
  times out, until healed.

Each fault counts down in the ledger, so a retry served by another process sees it spent;
the lasting ones end when a test heals them (`Ledger.heal`), as a provider comes back.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from interlock import AdapterContext
from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable

LEDGER_FILE = "invoice-finance.sqlite3"
FAULT_MARK = "~"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS suppliers (name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS postings (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    invoice_id TEXT NOT NULL UNIQUE,
    supplier TEXT NOT NULL,
    invoice_number TEXT NOT NULL,
    total TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reversals (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    invoice_id TEXT NOT NULL UNIQUE,
    posting_number TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (invoice_id TEXT NOT NULL, operation TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spent_faults (
    invoice_number TEXT NOT NULL, fault TEXT NOT NULL, PRIMARY KEY (invoice_number, fault)
);
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT, invoice_id TEXT NOT NULL, posting_number TEXT NOT NULL
);
"""
T = TypeVar("T")


def fault_of(invoice_number: str) -> str | None:
    """The fault an invoice number asks the simulators for, if any."""
    _, mark, fault = invoice_number.rpartition(FAULT_MARK)
    return fault if mark else None


def ledger_path(home: Path) -> Path:
    return home / LEDGER_FILE


class Ledger:
    """The simulators' shared state in one SQLite file (created on first use)."""

    def __init__(self, path: Path, suppliers: tuple[str, ...]) -> None:
        self.path = path
        self._suppliers = suppliers
        self._ready = False

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once so concurrent processes queue behind it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            if not self._ready:
                conn.executescript(_SCHEMA)
                conn.executemany(
                    "INSERT OR IGNORE INTO suppliers VALUES (?)", [(s,) for s in self._suppliers]
                )
                self._ready = True
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def in_tx() -> T:
            with self._tx() as conn:
                return work(conn)

        return await asyncio.to_thread(in_tx)

    @staticmethod
    def spend(conn: sqlite3.Connection, invoice_number: str, fault: str) -> bool:
        """Whether `fault` of this invoice was still to come (it is spent now)."""
        if fault_of(invoice_number) != fault:
            return False
        cur = conn.execute(
            "INSERT OR IGNORE INTO spent_faults VALUES (?, ?)", (invoice_number, fault)
        )
        return cur.rowcount == 1

    @staticmethod
    def lasting(conn: sqlite3.Connection, invoice_number: str, fault: str) -> bool:
        """Whether lasting `fault` of this invoice holds (it does until healed)."""
        if fault_of(invoice_number) != fault:
            return False
        cur = conn.execute(
            "SELECT 1 FROM spent_faults WHERE invoice_number = ? AND fault = ?",
            (invoice_number, fault),
        )
        return cur.fetchone() is None

    async def heal(self, invoice_number: str, fault: str) -> None:
        """End lasting `fault` of this invoice: the finance system answers from now on."""
        sql = "INSERT OR IGNORE INTO spent_faults VALUES (?, ?)"
        await self.run(lambda c: c.execute(sql, (invoice_number, fault)))

    async def count(self, table: str, invoice_id: str, operation: str | None = None) -> int:
        """Rows of `table` (postings, reversals, notifications, calls) of one invoice."""
        where, args = "invoice_id = ?", [invoice_id]
        if operation is not None:
            where, args = where + " AND operation = ?", [*args, operation]
        sql = f"SELECT count(*) FROM {table} WHERE {where}"  # the table is one of ours
        return int(await self.run(lambda c: c.execute(sql, args).fetchone()[0]))


class LedgerFinance:
    """The finance system on the shared ledger (see the module): suppliers, postings once per
    `invoice_id`, lookups, reversals once per posting."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def supplier_known(self, supplier: str) -> bool:
        def known(c: sqlite3.Connection) -> bool:
            row = c.execute("SELECT 1 FROM suppliers WHERE name = ?", (supplier,)).fetchone()
            return row is not None

        return bool(await self.ledger.run(known))

    async def posted_invoice(self, supplier: str, invoice_number: str) -> str | None:
        def find(c: sqlite3.Connection) -> str | None:
            row = c.execute(
                "SELECT invoice_id FROM postings WHERE supplier = ? AND invoice_number = ?",
                (supplier, invoice_number),
            ).fetchone()
            return None if row is None else str(row[0])

        return await self.ledger.run(find)

    async def lookup(self, invoice_id: str) -> str | None:
        def find(c: sqlite3.Connection) -> tuple[str | None, bool]:
            c.execute("INSERT INTO calls VALUES (?, 'lookup')", (invoice_id,))
            row = c.execute(
                "SELECT number, invoice_number FROM postings WHERE invoice_id = ?", (invoice_id,)
            ).fetchone()
            if row is None:
                return None, False
            return _number(row[0]), Ledger.lasting(c, str(row[1]), "answers-lost")

        number, lost = await self.ledger.run(find)
        if lost:
            raise ExternalTimeout("finance system: lookup unanswered")
        return number

    async def post(self, invoice_id: str, supplier: str, invoice_number: str, total: str) -> str:
        def posting(c: sqlite3.Connection) -> tuple[str | None, bool]:
            c.execute("INSERT INTO calls VALUES (?, 'post')", (invoice_id,))
            if Ledger.spend(c, invoice_number, "timeout-once") or Ledger.lasting(
                c, invoice_number, "unanswered"
            ):
                return None, True
            c.execute(
                "INSERT OR IGNORE INTO postings (invoice_id, supplier, invoice_number, total)"
                " VALUES (?, ?, ?, ?)",
                (invoice_id, supplier, invoice_number, total),
            )
            row = c.execute(
                "SELECT number FROM postings WHERE invoice_id = ?", (invoice_id,)
            ).fetchone()
            lost = Ledger.spend(c, invoice_number, "lose-response") or Ledger.lasting(
                c, invoice_number, "answers-lost"
            )
            return _number(row[0]), lost

        number, lost = await self.ledger.run(posting)
        if number is None:
            raise ExternalTimeout("finance system: no answer, request not received")
        if lost:
            raise ExternalTimeout("finance system: posted, answer lost")
        return number

    async def reverse(self, invoice_id: str, posting_number: str) -> str:
        def reversal(c: sqlite3.Connection) -> str | None:
            c.execute("INSERT INTO calls VALUES (?, 'reverse')", (invoice_id,))
            row = c.execute(
                "SELECT number FROM postings WHERE invoice_id = ?", (invoice_id,)
            ).fetchone()
            if row is None or _number(row[0]) != posting_number:
                return None
            c.execute(
                "INSERT OR IGNORE INTO reversals (invoice_id, posting_number) VALUES (?, ?)",
                (invoice_id, posting_number),
            )
            found = c.execute(
                "SELECT number FROM reversals WHERE invoice_id = ?", (invoice_id,)
            ).fetchone()
            return f"REV-{found[0]:06d}"

        reversed_as = await self.ledger.run(reversal)
        if reversed_as is None:
            raise ExternalRejected(
                "finance system: no such posting under the key", error_class="posting_not_found"
            )
        return reversed_as


class LedgerNotifier:
    """The accounts-payable notifier on the shared ledger: one row per notification sent."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def notify(self, invoice_id: str, supplier: str, posting_number: str) -> str:
        def send(c: sqlite3.Connection) -> str | None:
            row = c.execute(
                "SELECT invoice_number FROM postings WHERE invoice_id = ?", (invoice_id,)
            ).fetchone()
            if row is not None and fault_of(str(row[0])) == "notify-fails":
                return None
            cur = c.execute(
                "INSERT INTO notifications (invoice_id, posting_number) VALUES (?, ?)",
                (invoice_id, posting_number),
            )
            return f"note-{cur.lastrowid}"

        sent = await self.ledger.run(send)
        if sent is None:
            raise ExternalUnavailable("notifier: unavailable")
        return sent


def _number(value: int) -> str:
    return f"FIN-{value:06d}"


def ledger_of(ctx: AdapterContext, suppliers: tuple[str, ...]) -> Ledger:
    """The installation's ledger, or the file `INTERLOCK_ADAPTERS` names (`ledger`)."""
    configured = ctx.config.get("ledger")
    return Ledger(Path(str(configured)) if configured else ledger_path(ctx.home), suppliers)
