"""A webhook's URL taken out of a text that quotes it: `unquoted(text, url)`.

A Slack or Discord webhook's URL is itself a secret (whoever has it can post to the channel), and a
server may echo it in an error answer (Express: `Cannot POST /services/T…/B…/XXXX`). A failed send's
sentence is kept as the channel's last error and logged, so before it goes anywhere the URL is
masked in it: whole, its path with and without the query, and each of its parts (path segments,
query values, the fragment) that may be a secret (see `_secret_like`), as sent and percent-decoded.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

MASK = "…"
SECRET_PART = 16  # a part of the URL this long is masked wherever it stands (a Slack token: 24 characters) ...
ID_PART = 8  # ... and one this long with a digit in it (Slack's T… and B… ids); not words such as "redirect"


def unquoted(text: str, url: str) -> str:
    """`text` with every piece of `url` that may hold its secret replaced by MASK."""
    for piece in sorted(_pieces(url), key=len, reverse=True):  # the longest first: a part is in the whole
        text = text.replace(piece, MASK)
    return text


def _pieces(url: str) -> set[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return {url} if url else set()
    query = f"?{parts.query}" if parts.query else ""
    whole = {url, parts.path, parts.path + query, parts.path + query + (f"#{parts.fragment}" if parts.fragment else "")}
    small = [*parts.path.split("/"), *(value for pair in parse_qsl(parts.query) for value in pair), parts.fragment]
    found = {piece for piece in whole if len(piece) > 1} | {part for part in small if _secret_like(part)}
    return found | {unquote(piece) for piece in found}


def _secret_like(part: str) -> bool:
    return len(part) >= SECRET_PART or (len(part) >= ID_PART and any(c.isdigit() for c in part))
