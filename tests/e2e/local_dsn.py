"""The DSN of the app under test's own inbox: its key is random per install and kept in the app's
database (app/projects/registry.py), so tests read it there, as the app's pages do when they are built."""

from __future__ import annotations

from app.settings import LOCAL_PROJECT_ID, local_dsn_with
from reflex_lookout.dsn import Dsn
from tests.e2e.app_server import AppServer
from tests.services import read_value


def local_dsn(server: AppServer) -> Dsn:
    """`http://<key>@localhost/1` of the running app (it made the key when it first started)."""
    key = read_value(server.env["DATABASE_URL"], "select public_key from inbox_project where id = :id",
                     id=LOCAL_PROJECT_ID)
    assert isinstance(key, str), "the app under test has no local project"
    return local_dsn_with(key)
