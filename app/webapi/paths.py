"""Which paths are the web API's: everything under `/api/0/` but the ingest endpoints' forms
(`/api/<project>/envelope/`, `/store/`, `/security/`, for a project 0). Pure, for the origin guard."""

from __future__ import annotations

import re

PREFIX = "/api/0/"
INGEST = re.compile(r"^/api/0/(envelope|store|security)/?$")


def is_web_api_path(path: str) -> bool:
    return path.startswith(PREFIX) and INGEST.match(path) is None
