"""Sentry's web links to issues, on Lookout's console: the MCP server prints links of Sentry's form
(`http://HOST/organizations/ORG/issues/WEB-C/`, `…/issues/?query=…`) built from its `--host`, and an
issue's `permalink` has that form too, so a person following one lands on the console's issue page
(`/issue?id=12`) or issues list (`/issues?query=…`), and the MCP server can read one back."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode

import anyio.to_thread
from starlette.responses import RedirectResponse

from app import routes
from app.inbox.search import IssueSearch
from app.inbox.search.grammar import MAX_QUERY_CHARS
from app.webapi import lookup

LINK = re.compile(r"/organizations/[A-Za-z0-9_.-]{1,100}/issues/(?:([A-Za-z0-9-]{1,200})/?)?")


async def console_page(path: str, query_string: bytes, search: IssueSearch) -> RedirectResponse | None:
    """The console's page for a Sentry link (None: `path` is none)."""
    found = LINK.fullmatch(path)
    if found is None:
        return None
    reference = found.group(1)
    if reference is None:
        query = parse_qs(query_string.decode("latin-1")).get("query", [""])[0][:MAX_QUERY_CHARS]
        return RedirectResponse(f"{routes.ISSUES}?{urlencode({'query': query})}", 302)
    try:
        issue = await anyio.to_thread.run_sync(lookup.issue, search, reference)
    except lookup.NotFound:
        return RedirectResponse(f"{routes.ISSUES}?{urlencode({'query': reference})}", 302)
    return RedirectResponse(f"{routes.ISSUE}?id={issue['id']}", 302)
