"""Running SQL scripts from migrations.

asyncpg prepares each statement, and a prepared statement holds exactly one command, so a
script is split into statements at lines reading `--;`.
"""

from __future__ import annotations

from alembic import op


def run(script: str) -> None:
    for statement in script.split("\n--;\n"):
        if statement.strip():
            op.execute(statement)
