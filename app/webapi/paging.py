"""Sentry's paging: a `cursor` query parameter (`value:offset:is_prev`, opaque to the clients) and a
`Link` header whose `rel="next"` item says `results="true"` while there are more, with the cursor of
the next page. Offsets are bounded by what search counts (MAX_HITS)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from app.inbox.search.engine import MAX_HITS

CURSOR = re.compile(r"([0-9]{1,20}):([0-9]{1,6}):([01])")


class PagingError(ValueError):
    """A cursor or page size out of bounds (answered 400 with the sentence)."""


def page_size(params: QueryParams, default: int, most: int) -> int:
    """`limit` or `per_page`, 1 to `most`."""
    given = params.get("limit") or params.get("per_page") or ""
    if not given:
        return default
    if not (given.isascii() and given.isdigit() and len(given) < 7) or not 1 <= int(given) <= most:
        raise PagingError(f"limit (or per_page) is a whole number from 1 to {most}.")
    return int(given)


def offset(params: QueryParams) -> int:
    """The offset the `cursor` names (0 for none, or an empty one)."""
    cursor = params.get("cursor", "")
    if not cursor:
        return 0
    found = CURSOR.fullmatch(cursor)
    if found is None or int(found.group(2)) > MAX_HITS:
        raise PagingError(f"The cursor {cursor[:40]!r} is not one this API gave "
                          f"(value:offset:is_prev, offset at most {MAX_HITS:,}).")
    return int(found.group(2))


def link(url: str, params: QueryParams, start: int, size: int, more: bool, following: int | None = None) -> str:
    """The `Link` header of the page at `start` of `size` items (`more`: a next page has results), the
    next page at `following` (by default `start + size`)."""
    kept = [(k, v) for k, v in params.multi_items() if k != "cursor"]

    def item(rel: str, cursor: str, results: bool) -> str:
        query = urlencode([*kept, ("cursor", cursor)])
        return f'<{url}?{query}>; rel="{rel}"; results="{"true" if results else "false"}"; cursor="{cursor}"'

    previous = f"0:{max(0, start - size)}:1"
    following = start + size if following is None else following
    return ", ".join((item("previous", previous, start > 0), item("next", f"0:{following}:0", more)))
