"""Lookout's command line, one entry: `python -m app COMMAND …`

    projects   add, dev-servers, list: the inbox's projects and their DSNs (app/projects/registry.py)
    accounts   the console's users (app/console/accounts.py)
    tokens     upload tokens for sentry-cli (app/sourcemaps/tokens.py); `tokens api`, `api-list`,
               `api-revoke`: API tokens of the web API (app/webapi/cli.py)

`python -m app COMMAND --help` says more. The older paths (`python -m app.inbox.projects`,
`app.inbox.accounts`, `app.inbox.tokens` and each module's own) still work.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

Main = Callable[[list[str]], int]


def _projects(argv: list[str]) -> int:
    from app.projects.registry import main

    return main(argv)


def _accounts(argv: list[str]) -> int:
    from app.console.accounts import main

    return main(argv)


def _tokens(argv: list[str]) -> int:
    from app.webapi import cli

    if argv[:1] and argv[0] in cli.COMMANDS:
        return cli.main(argv)
    from app.sourcemaps.tokens import main

    return main(argv)


COMMANDS: dict[str, Main] = {"projects": _projects, "accounts": _accounts, "tokens": _tokens}


def run(argv: list[str]) -> int:
    """Run `argv` (a command and its arguments); the exit status."""
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    if command is None:
        print(f"python -m app: there is no command {argv[0]!r}; the commands are {', '.join(COMMANDS)}.",
              file=sys.stderr)
        return 2
    return command(argv[1:])
