"""Move Lookout's data from one database to another, e.g. the embedded SQLite file to PostgreSQL:

    .venv/bin/python -m app.copy_database sqlite:///.data/lookout.db postgresql+psycopg://lookout@db/lookout

Stop Lookout first (nothing may write to either side meanwhile). The target is migrated to the
newest schema and must hold no Lookout rows yet; every table is copied in dependency order, in
batches, in one transaction (all or nothing), then PostgreSQL's id sequences are moved past the
copied ids. It prints each table's row count, and checks the target's counts match the source's.
"""

from __future__ import annotations

import argparse
import sys

import sqlalchemy

from app import db
from app.models import METADATAS

BATCH = 1000


class CopyError(Exception):
    """The copy cannot be made (a target with rows already, or counts that do not match)."""


def copy(source: sqlalchemy.Engine, target: sqlalchemy.Engine) -> dict[str, int]:
    """Copy every table's rows from `source` to `target` (migrated first); rows per table."""
    db.migrate(source)
    db.migrate(target)
    tables = [table for metadata in METADATAS for table in metadata.sorted_tables]
    copied: dict[str, int] = {}
    with source.connect() as reading, target.begin() as writing:
        for table in tables:
            if writing.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(table)).scalar_one():
                raise CopyError(f"The target's table {table.name} has rows already; copy into an empty database.")
        for table in tables:
            copied[table.name] = 0
            rows = reading.execute(sqlalchemy.select(table)).mappings()
            while batch := rows.fetchmany(BATCH):
                writing.execute(sqlalchemy.insert(table), [dict(row) for row in batch])
                copied[table.name] += len(batch)
        if target.dialect.name == "postgresql":
            for table in tables:
                if (column := table.autoincrement_column) is not None:
                    writing.exec_driver_sql(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column.name}'), "
                        f"COALESCE((SELECT MAX({column.name}) FROM {table.name}), 0) + 1, false) "
                        f"WHERE pg_get_serial_sequence('{table.name}', '{column.name}') IS NOT NULL"
                    )
        for table in tables:
            found = writing.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(table)).scalar_one()
            if found != copied[table.name]:
                raise CopyError(f"{table.name}: {copied[table.name]} rows copied but {found} in the target.")
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.copy_database", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="SQLAlchemy URL to copy from")
    parser.add_argument("target", help="SQLAlchemy URL to copy to (an empty database)")
    args = parser.parse_args(argv)
    try:
        copied = copy(sqlalchemy.create_engine(args.source), sqlalchemy.create_engine(args.target))
    except CopyError as exc:
        print(exc, file=sys.stderr)
        return 2
    for name, count in copied.items():
        print(f"{name}\t{count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
