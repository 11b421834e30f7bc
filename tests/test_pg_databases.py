"""The PostgreSQL databases tests get (tests/pg_databases.py): used again only when a test could
not tell them from a new copy of the template."""

from __future__ import annotations

import pytest
import sqlalchemy

from tests import services
from tests.pg_databases import Databases


def first_project_id(url: str, name: str) -> int:
    engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool)
    with engine.begin() as connection:
        found = connection.exec_driver_sql(
            "insert into inbox_project (name, public_key, created_at)"
            " values (%s, %s, extract(epoch from now())) returning id", (name, name * 2),
        ).scalar_one()
    engine.dispose()
    return int(found)


def existing(databases: Databases) -> set[str]:
    with databases.admin.connect() as connection:
        return set(connection.exec_driver_sql("select datname from pg_database").scalars())


def test_a_database_given_back_is_empty_and_its_sequences_start_over(
    postgres_server: services.Postgres, postgres_databases: Databases
) -> None:
    name = postgres_databases.take()
    assert first_project_id(postgres_server.url(name), "one") == 1
    leftover = sqlalchemy.create_engine(postgres_server.url(name), poolclass=sqlalchemy.pool.NullPool).connect()
    postgres_databases.give_back(name)
    assert name not in existing(postgres_databases)  # renamed: what the test left connected finds nothing
    with pytest.raises(sqlalchemy.exc.DBAPIError):
        leftover.exec_driver_sql("select 1")
    again = postgres_databases.take()
    engine = sqlalchemy.create_engine(postgres_server.url(again), poolclass=sqlalchemy.pool.NullPool)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("select count(*) from inbox_project").scalar_one() == 0
    engine.dispose()
    assert first_project_id(postgres_server.url(again), "two") == 1
    postgres_databases.give_back(again)


@pytest.mark.parametrize("change", [
    "alter table inbox_project add column extra text",
    "alter table outbox rename to outbox_gone",
    "alter table outbox alter column body type text",
    "update alembic_version set version_num = '0001'",
])
def test_a_database_whose_schema_a_test_changed_is_dropped(
    postgres_server: services.Postgres, postgres_databases: Databases, change: str
) -> None:
    name = postgres_databases.take()
    engine = sqlalchemy.create_engine(postgres_server.url(name), poolclass=sqlalchemy.pool.NullPool)
    with engine.begin() as connection:
        connection.exec_driver_sql(change)
    engine.dispose()
    free_before, before = list(postgres_databases.free), existing(postgres_databases)
    postgres_databases.give_back(name)
    assert postgres_databases.free == free_before
    assert existing(postgres_databases) == before - {name}  # gone, under no other name either
