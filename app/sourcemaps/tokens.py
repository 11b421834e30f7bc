"""Upload tokens: what lets `sentry-cli` (and the bundler plugins) upload a project's source maps
to Lookout's upload API (app/sourcemaps/upload_api.py), and nothing else: the console, the inbox
API and ingest never take them.

A token belongs to one project. Its secret is 64 lower-case hex digits (32 random bytes: the shape
sentry-cli takes as a user token, with no warning), shown once, when it is made; only its SHA-256
is kept, so a request's token is found with one indexed lookup of its hash (no secret is ever
compared character by character). A revoked token stays listed, with the date it was revoked.
Maintainers make and revoke tokens here or on the console's /tokens page:

    .venv/bin/python -m app.sourcemaps.tokens add PROJECT [--label L]   # PROJECT: its id or its name
    .venv/bin/python -m app.sourcemaps.tokens list
    .venv/bin/python -m app.sourcemaps.tokens revoke ID

API tokens, for Sentry's web API, are another kind: `python -m app.inbox.tokens api --help` (app/webapi/cli.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import sqlalchemy
from sqlalchemy import insert, select, update

from app import db
from app.projects.registry import PROJECTS
from app.protocol.bearer import (
    MAX_HEADER_CHARS as MAX_HEADER_CHARS,  # re-exported: callers of this module name it here
    MAX_LABEL_CHARS,
    SECRET,
    TOUCH_EVERY_S,
    BearerRefused,
    IssuedToken,
    bearer_secret,
    day,
    digest,
    issued,
    label_of,
    new_secret,
)
from app.sourcemaps.tables import TOKENS

ORG = "lookout"  # any organization slug works: Lookout has one
# Where the upload API is without LOOKOUT_PUBLIC_URL: the app's port, in prod (one port) and in dev
# (Vite proxies /api/ to the backend, keeping the Host the chunk-upload URL is built from).
LOCAL_URL = "http://localhost:3000"
HOW_TO_GET_ONE = "a maintainer makes one with `python -m app.sourcemaps.tokens add PROJECT` or on the console's Tokens page"
NO_TOKEN = f"No upload token: send `Authorization: Bearer <token>` (SENTRY_AUTH_TOKEN for sentry-cli); {HOW_TO_GET_ONE}."


class TokenRefused(Exception):
    """A request's token does not allow it: `status` (401 or 403) and a `sentence` saying why."""

    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
        self.sentence = sentence


@dataclass(frozen=True)
class TokenRow(IssuedToken):
    id: int
    project_id: int


COLUMNS = (TOKENS.c.id, TOKENS.c.project_id, TOKENS.c.label, TOKENS.c.prefix, TOKENS.c.created_at,
           TOKENS.c.created_by, TOKENS.c.last_used_at, TOKENS.c.revoked_at)


def secret_of(authorization: str | None) -> str:
    """The secret in an `Authorization: Bearer <secret>` header value (at most MAX_HEADER_CHARS
    looked at), or `TokenRefused` (401) saying what is wrong with it."""
    try:
        return bearer_secret(authorization, "upload token", NO_TOKEN)
    except BearerRefused as exc:
        raise TokenRefused(401, str(exc)) from None


class Tokens:
    """The upload tokens in the database. Sync (SQLAlchemy): callers on the event loop run it in a
    worker thread."""

    def __init__(self, engine: sqlalchemy.Engine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock

    def add(self, project_id: int, label: str = "", created_by: str = "cli") -> tuple[TokenRow, str]:
        """A new token for the project, and its secret (kept nowhere: show it now); `ValueError`
        with a sentence for an unknown project or a label too long."""
        label = label_of(label)
        secret = new_secret()
        now = self.clock()
        with self.engine.begin() as connection:
            if connection.execute(select(PROJECTS.c.id).where(PROJECTS.c.id == project_id)).first() is None:
                raise ValueError(f"There is no project {project_id}: `python -m app.projects.registry list` shows them.")
            token_id = db.inserted_id(connection.execute(insert(TOKENS).values(
                project_id=project_id, label=label, prefix=secret[:8], token_sha256=digest(secret),
                created_at=now, created_by=created_by[:MAX_LABEL_CHARS],
            )))
        return TokenRow(token_id, project_id, label=label, prefix=secret[:8], created_at=now,
                        created_by=created_by[:MAX_LABEL_CHARS], last_used_at=None, revoked_at=None), secret

    def list(self, project_id: int | None = None) -> list[TokenRow]:
        """Every token (revoked ones too), oldest first, or one project's."""
        query = select(*COLUMNS).order_by(TOKENS.c.id)
        if project_id is not None:
            query = query.where(TOKENS.c.project_id == project_id)
        with self.engine.connect() as connection:
            return [TokenRow(row.id, row.project_id, **issued(row)) for row in connection.execute(query)]

    def revoke(self, token_id: int) -> bool:
        """Revoke a token from now on (a token revoked before keeps its first date); False when
        there is no such token."""
        with self.engine.begin() as connection:
            connection.execute(update(TOKENS).where(TOKENS.c.id == token_id, TOKENS.c.revoked_at.is_(None))
                               .values(revoked_at=self.clock()))
            return connection.execute(select(TOKENS.c.id).where(TOKENS.c.id == token_id)).first() is not None

    def check(self, authorization: str | None) -> TokenRow:
        """The live token an `Authorization` header value names, or `TokenRefused` (401) with a
        sentence. Marks the token used (at most once a minute, to spare the database a write per
        chunk)."""
        secret = secret_of(authorization)
        unknown = TokenRefused(401, f"This upload token is not known to this Lookout; {HOW_TO_GET_ONE}.")
        if not SECRET.fullmatch(secret):
            raise unknown
        with self.engine.connect() as connection:
            row = connection.execute(select(*COLUMNS).where(TOKENS.c.token_sha256 == digest(secret))).first()
        if row is None:
            raise unknown
        token = TokenRow(row.id, row.project_id, **issued(row))
        if token.revoked_at is not None:
            raise TokenRefused(401, f"This upload token was revoked on {day(token.revoked_at)}; {HOW_TO_GET_ONE}.")
        used = db.mark_used(self.engine, TOKENS, token.id, token.last_used_at, self.clock(), TOUCH_EVERY_S)
        return replace(token, last_used_at=used)


def upload_url(public_url: str) -> str:
    """Where sentry-cli reaches the upload API: LOOKOUT_PUBLIC_URL, else the app on this machine."""
    return public_url or LOCAL_URL


def settings_text(project_id: int, secret: str, url: str) -> str:
    """Ready-to-paste settings that point sentry-cli (and @sentry/vite-plugin, which reads the same
    variables) at this Lookout with a token."""
    return (f"SENTRY_URL={url}\nSENTRY_ORG={ORG}\nSENTRY_PROJECT={project_id}\nSENTRY_AUTH_TOKEN={secret}\n")


def project_id_of(engine: sqlalchemy.Engine, text: str) -> int:
    """The project a CLI argument names (its id, or its exact name); `ValueError` with a sentence."""
    with engine.connect() as connection:
        projects = connection.execute(select(PROJECTS.c.id, PROJECTS.c.name).order_by(PROJECTS.c.id)).all()
    text = text.strip()
    number = int(text) if 0 < len(text) <= 18 and text.isascii() and text.isdigit() else None
    found = [p.id for p in projects if p.id == number or p.name == text]
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"Several projects are named {text!r} ({', '.join(map(str, found))}): give its id.")
    raise ValueError(f"There is no project {text!r}: `python -m app.projects.registry list` shows them.")


def main(argv: list[str] | None = None, engine: sqlalchemy.Engine | None = None) -> int:
    """The command line, on `engine` (by default the configured database, migrated)."""
    parser = argparse.ArgumentParser(prog="python -m app.sourcemaps.tokens", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="make an upload token for a project and print it, once")
    add.add_argument("project", help="the project's id or name (python -m app.projects.registry list)")
    add.add_argument("--label", default="", help="what the token is for, e.g. the app or CI job using it")
    add.add_argument("--url", default="", help="the address sentry-cli reaches Lookout at, for the printed "
                                               f"settings (default: LOOKOUT_PUBLIC_URL, else {LOCAL_URL})")
    commands.add_parser("list", help="print every token (never their secrets)")
    commands.add_parser("revoke", help="revoke a token: uploads with it are refused from now on").add_argument(
        "id", type=int)
    args = parser.parse_args(argv)
    from app import db
    from app.settings import Settings

    engine = engine if engine is not None else db.migrated_engine()
    tokens = Tokens(engine)
    if args.command == "add":
        try:
            url = args.url.rstrip("/") or upload_url(Settings.from_env(os.environ).public_url)
            row, secret = tokens.add(project_id_of(engine, args.project), args.label)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        print(f"Upload token {row.id} for project {row.project_id}, shown only now (Lookout keeps its hash):\n\n"
              f"    {secret}\n\nFor sentry-cli (environment variables; @sentry/vite-plugin reads them too):\n\n"
              + settings_text(row.project_id, secret, url)
              + "\nthen: sentry-cli sourcemaps inject dist && sentry-cli sourcemaps upload dist")
        return 0
    if args.command == "revoke":
        if not tokens.revoke(args.id):
            print(f"There is no upload token {args.id}: `python -m app.sourcemaps.tokens list` shows them.", file=sys.stderr)
            return 2
        print(f"Upload token {args.id} is revoked: uploads with it are refused.")
        return 0
    print("id\tproject\tlabel\tprefix\tcreated\tcreated by\tlast used\trevoked")
    for row in tokens.list():
        print("\t".join((str(row.id), str(row.project_id), row.label, row.prefix + "…", day(row.created_at),
                         row.created_by, day(row.last_used_at) if row.last_used_at else "never",
                         day(row.revoked_at) if row.revoked_at else "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
