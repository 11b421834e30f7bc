"""The inbox's projects: each is a row with its id and public key, and so a DSN another app's
Sentry SDK can report with (`http://<public key>@<host:port>/<id>`). The first one, the app's own
(the local DSN), exists out of the box: `settle_local_dsn` makes it on the first start, with a key
random per install, unless LOOKOUT_LOCAL_DSN names one. More are added from the command line:

    .venv/bin/python -m app.projects.registry add "Billing service" [--host HOST:PORT] [--dev-server ORIGIN ...]
    .venv/bin/python -m app.projects.registry dev-servers PROJECT_ID [ORIGIN ...]
    .venv/bin/python -m app.projects.registry list [--host HOST:PORT]

`--dev-server` (again for each) and `dev-servers` (none: the project has none) set the dev servers whose
modules the project's browser frames are mapped with (app/projects/sourcemap_options.py), as the
settings page does: each on this machine (localhost, 127.0.0.1, [::1]; `checked_sourcemaps`).
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
import time
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import func, insert, select

from app.projects.tables import PROJECTS
from app.settings import LOCAL_PROJECT_ID, Settings, local_dsn_with
from reflex_lookout.dsn import Dsn

DEFAULT_HOST = "localhost:3000"
LOCAL_PROJECT_NAME = "Lookout"


def new_key() -> str:
    """A project's public key: 32 random hex digits, as Sentry's."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Project:
    id: int
    name: str
    public_key: str

    def dsn(self, host: str) -> str:
        """Its DSN for SDKs that reach this Lookout at `host` (the ingest endpoints are on the app's port)."""
        return f"http://{self.public_key}@{host}/{self.id}"


class Projects:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def add(self, name: str) -> Project:
        """A new project with the next free id and a random key; `ValueError` for an empty name."""
        name = name.strip()
        if not name:
            raise ValueError("A project needs a name.")
        key = new_key()
        with self.engine.begin() as connection:
            project_id = (connection.execute(select(func.max(PROJECTS.c.id))).scalar() or 0) + 1
            connection.execute(insert(PROJECTS).values(id=project_id, name=name, public_key=key, created_at=time.time()))
        return Project(project_id, name, key)

    def all(self) -> list[Project]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(PROJECTS.c.id, PROJECTS.c.name, PROJECTS.c.public_key).order_by(PROJECTS.c.id))
            return [Project(*row) for row in rows]

    def local_dsn(self) -> Dsn:
        """This install's own local DSN: project 1's, made with a random key if it does not exist.
        Made once: when several workers start at once, the first insert wins (the others' hit the
        primary key, on SQLite and PostgreSQL alike) and every one reads the key that won."""
        key = select(PROJECTS.c.public_key).where(PROJECTS.c.id == LOCAL_PROJECT_ID)
        with contextlib.suppress(sqlalchemy.exc.IntegrityError), self.engine.begin() as connection:
            if connection.execute(key).first() is None:
                connection.execute(insert(PROJECTS).values(
                    id=LOCAL_PROJECT_ID, name=LOCAL_PROJECT_NAME, public_key=new_key(), created_at=time.time()))
        with self.engine.connect() as connection:
            return local_dsn_with(connection.execute(key).scalar_one())


def settle_local_dsn(settings: Settings, engine: sqlalchemy.Engine) -> Dsn:
    """`settings.local_dsn`, filled in from the database if LOOKOUT_LOCAL_DSN did not name one (at
    start, once migrated, and at compile time: the pages carry it)."""
    if settings.local_dsn is None:
        settings.settle_local_dsn(Projects(engine).local_dsn())
    assert settings.local_dsn is not None
    return settings.local_dsn


def main(argv: list[str] | None = None, engine: sqlalchemy.Engine | None = None) -> int:
    """The command line, on `engine` (by default the configured database, migrated)."""
    parser = argparse.ArgumentParser(prog="python -m app.projects.registry", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"host:port SDKs reach Lookout at (default {DEFAULT_HOST})")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a project and print its DSN")
    add.add_argument("name")
    add.add_argument("--dev-server", action="append", default=[], metavar="ORIGIN",
                     help="a dev server whose modules map the project's frames (http://127.0.0.1:3000); repeatable")
    servers = commands.add_parser("dev-servers", help="set a project's dev servers (none given: it has none)")
    servers.add_argument("project_id", type=int)
    servers.add_argument("origins", nargs="*", metavar="ORIGIN")
    commands.add_parser("list", help="print every project's DSN")
    args = parser.parse_args(argv)
    from app import db
    from app.projects.options_store import ProjectOptionsStore, checked_sourcemaps
    from app.projects.sourcemap_options import SourceMapOptions

    engine = engine if engine is not None else db.migrated_engine()
    projects = Projects(engine)
    if args.command in ("add", "dev-servers"):
        try:  # the origins are checked before the project is made: a bad one makes nothing
            maps = checked_sourcemaps(SourceMapOptions(tuple(args.dev_server if args.command == "add" else args.origins)))
            project = projects.add(args.name) if args.command == "add" else None
            project_id = args.project_id if project is None else project.id
            if maps.dev_servers or args.command == "dev-servers":
                ProjectOptionsStore(engine).set_sourcemaps(project_id, maps, by="python -m app.projects.registry")
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        if project is not None:
            print(project.dsn(args.host))
        return 0
    for project in projects.all():
        print(f"{project.id}\t{project.name}\t{project.dsn(args.host)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
