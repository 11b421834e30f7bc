"""Empty, migrated PostgreSQL databases for the tests, copied from a template and used again.

A copy (`CREATE DATABASE … TEMPLATE`) costs the server ~0.4 s of CPU: it writes every page of the
template, system catalogs included, for each of the ~320 tests that run on PostgreSQL. Emptying a
database after its test costs ~20 ms. So a database a test is done with is taken from whatever may
still be connected to it (its connections ended and the database renamed, so that a leftover thread
of that test finds no database, as after a drop), checked (its schema must still be the template's:
a test that changed it gives its database up) and emptied (every row deleted, every sequence
restarted), then handed to the next test. Anything that fails on the way drops it instead.
"""

from __future__ import annotations

import uuid

import sqlalchemy

# What a database's schema is, in one digest: tables, indexes, sequences and views with their
# columns and types, triggers and functions, and the migration it is at.
SCHEMA_DIGEST = """
select md5(coalesce((
  select string_agg(concat_ws(' ', c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod)),
                    ',' order by c.relname, a.attnum)
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  where n.nspname = 'public'), '')
  || coalesce((select string_agg(t.tgname, ',' order by t.tgname) from pg_trigger t where not t.tgisinternal), '')
  || coalesce((select string_agg(p.proname, ',' order by p.proname)
               from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'), '')
  || coalesce((select string_agg(version_num, ',') from alembic_version), ''))
"""
TABLES = "select tablename from pg_tables where schemaname = 'public' and tablename <> 'alembic_version'"
SEQUENCES = "select sequencename from pg_sequences where schemaname = 'public'"


class SchemaChanged(Exception):
    """A test left its database with another schema than the template's."""


class Databases:
    """Copies of `template` on the server at `admin_url`'s, each handed to one test at a time."""

    def __init__(self, admin_url: str, template: str) -> None:
        self.admin = sqlalchemy.create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
        self.template = template
        self.free: list[str] = []
        self._digest: str | None = None

    def take(self) -> str:
        """The name of an empty database at the template's schema."""
        if self.free:
            return self.free.pop()
        name = _new_name()
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE DATABASE {name} TEMPLATE {self.template}")
        return name

    def give_back(self, name: str) -> None:
        """Empty `name` for the next test, or drop it if that cannot be done safely."""
        fresh = _new_name()
        try:
            with self.admin.connect() as connection:
                connection.exec_driver_sql(
                    "select pg_terminate_backend(pid) from pg_stat_activity where datname = %s and pid <> pg_backend_pid()",
                    (name,),
                )
                connection.exec_driver_sql(f"ALTER DATABASE {name} RENAME TO {fresh}")
            name = fresh
            engine = sqlalchemy.create_engine(self._url(fresh), poolclass=sqlalchemy.pool.NullPool)
            try:
                with engine.begin() as connection:
                    if connection.exec_driver_sql(SCHEMA_DIGEST).scalar_one() != self.digest():
                        raise SchemaChanged(name)
                    connection.exec_driver_sql("SET LOCAL lock_timeout = '5s'")
                    connection.exec_driver_sql("SET LOCAL session_replication_role = replica")  # no foreign-key checks
                    for (table,) in connection.exec_driver_sql(TABLES).all():
                        connection.exec_driver_sql(f'DELETE FROM "{table}"')
                    for (sequence,) in connection.exec_driver_sql(SEQUENCES).all():
                        connection.exec_driver_sql(f'ALTER SEQUENCE "{sequence}" RESTART')
            finally:
                engine.dispose()
        except (sqlalchemy.exc.SQLAlchemyError, SchemaChanged):
            self.drop(name)
            return
        self.free.append(name)

    def drop(self, name: str) -> None:
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def digest(self) -> str:
        """The template's schema digest (read once)."""
        if self._digest is None:
            engine = sqlalchemy.create_engine(self._url(self.template), poolclass=sqlalchemy.pool.NullPool)
            with engine.connect() as connection:
                self._digest = str(connection.exec_driver_sql(SCHEMA_DIGEST).scalar_one())
            engine.dispose()
        return self._digest

    def _url(self, name: str) -> str:
        return self.admin.url.set(database=name).render_as_string(hide_password=False)

    def close(self) -> None:
        self.admin.dispose()


def _new_name() -> str:
    return f"test_{uuid.uuid4().hex[:16]}"
