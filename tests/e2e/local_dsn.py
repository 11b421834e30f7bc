"""The DSN of the app under test's own inbox: its key is random per install and kept in the app's
database (app/inbox/projects.py), so tests read it there, as the app's pages do when they are built."""

from __future__ import annotations

import sqlalchemy

from app.monitoring.settings import LOCAL_PROJECT_ID, Dsn, local_dsn_with
from tests.e2e.app_server import AppServer


def local_dsn(server: AppServer) -> Dsn:
    """`http://<key>@localhost/1` of the running app (it made the key when it first started)."""
    engine = sqlalchemy.create_engine(server.env["DATABASE_URL"], poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            key = connection.execute(sqlalchemy.text("select public_key from inbox_project where id = :id"),
                                     {"id": LOCAL_PROJECT_ID}).scalar_one()
    finally:
        engine.dispose()
    return local_dsn_with(key)
