"""The API tokens' command line, run through `python -m app.inbox.tokens` beside the upload tokens'
commands (app/sourcemaps/tokens.py):

    .venv/bin/python -m app.inbox.tokens api NAME [--scope S]... [--label L]   # prints the secret, once
    .venv/bin/python -m app.inbox.tokens api-list [NAME]
    .venv/bin/python -m app.inbox.tokens api-revoke ID

NAME is a console user (app/console/accounts.py); the token has every scope NAME's role allows unless
--scope names some. See docs/api-tokens.md.
"""

from __future__ import annotations

import argparse
import os
import sys

import sqlalchemy

from app.protocol.bearer import day
from app.webapi.scopes import SCOPES
from app.webapi.tokens import ApiTokenRow, ApiTokens

COMMANDS = ("api", "api-list", "api-revoke")
PROG = "python -m app.inbox.tokens"


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = found.add_subparsers(dest="command", required=True)
    make = commands.add_parser("api", help="make an API token for a console user and print it, once")
    make.add_argument("name", help="the console user the token acts as (python -m app.console.accounts)")
    make.add_argument("--scope", action="append", choices=SCOPES, dest="scopes",
                      help="a scope the token has (repeat for several; default: all the user's role allows)")
    make.add_argument("--label", default="", help="what the token is for, e.g. the script or agent using it")
    make.add_argument("--url", default="", help="Lookout's address, for the printed examples (default: "
                                                "LOOKOUT_PUBLIC_URL, else http://localhost:3000)")
    commands.add_parser("api-list", help="print the API tokens (never their secrets)").add_argument(
        "name", nargs="?", help="only this console user's tokens")
    commands.add_parser("api-revoke", help="revoke an API token: requests with it are refused from now on").add_argument(
        "id", type=int)
    return found


def made(row: ApiTokenRow, secret: str, role: str, url: str) -> str:
    """What `api` prints: the secret once, and how to send it."""
    return (f"API token {row.id} for {row.user_name} ({role}), shown only now (Lookout keeps its hash):\n\n"
            f"    {secret}\n\nScopes: {' '.join(row.scopes)}\n"
            "Send it as `Authorization: Bearer <token>` to Lookout's web API, for example:\n\n"
            f"    curl -H 'Authorization: Bearer {secret}' {url}/api/0/organizations/\n\n"
            f"sentry-cli: SENTRY_URL={url} SENTRY_AUTH_TOKEN=<token>; Sentry's MCP server: --access-token=<token>. "
            "More in docs/api-tokens.md.")


def listed(tokens: ApiTokens, row: ApiTokenRow) -> str:
    """One token as `api-list` prints it (never its secret); a removed user's is marked so."""
    user = row.user_name if tokens.role_of(row) is not None else f"{row.user_name} (removed)"
    return "\t".join((str(row.id), user, " ".join(row.scopes), row.label, row.prefix + "…", day(row.created_at),
                      row.created_by, day(row.last_used_at) if row.last_used_at else "never",
                      day(row.revoked_at) if row.revoked_at else ""))


def main(argv: list[str], engine: sqlalchemy.Engine | None = None) -> int:
    """The command line, on `engine` (by default the configured database, migrated)."""
    args = parser().parse_args(argv)
    from app import db
    from app.settings import Settings
    from app.sourcemaps.tokens import upload_url

    try:
        tokens = ApiTokens(engine if engine is not None else db.migrated_engine())
        if args.command == "api":
            row, secret = tokens.add(args.name, args.scopes, args.label)
            role = tokens.role_of(row) or "?"
            url = args.url.rstrip("/") or upload_url(Settings.from_env(os.environ).public_url)
            print(made(row, secret, role, url))
        elif args.command == "api-revoke":
            if not tokens.revoke(args.id):
                print(f"There is no API token {args.id}: `{PROG} api-list` shows them.", file=sys.stderr)
                return 2
            print(f"API token {args.id} is revoked: requests with it are refused.")
        else:
            print("id\tuser\tscopes\tlabel\tprefix\tcreated\tcreated by\tlast used\trevoked")
            for row in tokens.list(args.name):
                print(listed(tokens, row))
    except ValueError as exc:  # a sentence: an unknown user, a scope the role lacks, LOOKOUT_CONSOLE_USERS unread
        print(exc, file=sys.stderr)
        return 2
    return 0
