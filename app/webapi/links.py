"""Sentry's web links to issues, on Lookout's console: the MCP server prints links of Sentry's form
(`http://HOST/organizations/ORG/issues/WEB-C/`, `…/issues/?query=…`) built from its `--host`, and an
issue's `permalink` has that form too, so a person following one lands on the console's issue page
(`/issue?id=12`) or issues list (`/issues?query=…`), and the MCP server can read one back.

Only someone the console lets in (this machine or a signed-in user, app/console/state.py's
`viewer_of`) is sent on by what the link names: anyone else gets the same redirect to the sign-in
page for every link, before anything is looked up, so no answer says which issues or projects exist.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode

import anyio.to_thread
import sqlalchemy
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.types import Scope

from app import routes
from app.console import access
from app.console.accounts import COOKIE, Accounts
from app.inbox.search import IssueSearch
from app.inbox.search.grammar import MAX_QUERY_CHARS
from app.webapi import lookup

LINK = re.compile(r"/organizations/[A-Za-z0-9_.-]{1,100}/issues/(?:([A-Za-z0-9-]{1,200})/?)?")


class Links:
    """The console's page for a Sentry link, for those the console lets in."""

    def __init__(self, engine: sqlalchemy.Engine, accounts: Accounts | None = None) -> None:
        self.search = IssueSearch(engine)
        self.accounts = Accounts(engine) if accounts is None else accounts  # LOOKOUT_CONSOLE_USERS read once

    async def page(self, scope: Scope) -> RedirectResponse | None:
        """Where the link of an HTTP `scope` goes (None: its path is no Sentry link)."""
        found = LINK.fullmatch(scope["path"])
        if found is None:
            return None
        if not await self._let_in(scope):
            return RedirectResponse(routes.SIGN_IN, 302)
        reference = found.group(1)
        if reference is None:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("query", [""])[0][:MAX_QUERY_CHARS]
            return RedirectResponse(f"{routes.ISSUES}?{urlencode({'query': query})}", 302)
        try:
            issue = await anyio.to_thread.run_sync(lookup.issue, self.search, reference)
        except lookup.NotFound:
            return RedirectResponse(f"{routes.ISSUES}?{urlencode({'query': reference})}", 302)
        return RedirectResponse(f"{routes.ISSUE}?id={issue['id']}", 302)

    async def _let_in(self, scope: Scope) -> bool:
        if access.this_machine(access.Caller.from_scope(scope)):
            return True
        token = Request(scope).cookies.get(COOKIE, "")
        return bool(token) and await anyio.to_thread.run_sync(self.accounts.session, token) is not None
