"""Sentry's short ids: `BILLING-SERVICE-1Z` names issue 71 of the project "Billing service", as
Sentry's clients and people in chat name an issue (the project's short name, then the issue's id in
base 36). Both directions are pure; search (app/inbox/search) matches the short name to a project."""

from __future__ import annotations

import re

DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_ISSUE_ID = 2**63 - 1  # a database's BIGINT: 13 base-36 digits
MAX_SHORT_ID_CHARS = 200  # what parse_short_id reads at most
_NOT_ALPHANUMERIC = re.compile(r"[^A-Z0-9]+")
_SHORT_ID = re.compile(r"([A-Z0-9]+(?:-[A-Z0-9]+)*)-([0-9A-Z]{1,13})")


def short_name(project_name: str) -> str:
    """The project's name upper-cased, each run of other characters than A-Z and 0-9 one "-"
    ("PROJECT" when nothing is left): a short id's first part."""
    return _NOT_ALPHANUMERIC.sub("-", project_name.upper()).strip("-") or "PROJECT"


def base36(number: int) -> str:
    if number < 0:
        raise ValueError(f"{number} is negative: issue ids are not.")
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = DIGITS[digit] + digits
        if number == 0:
            return digits


def short_id(project_name: str, issue_id: int) -> str:
    """`LOOKOUT-1Z`: the project's short name and the issue's id in base 36, upper-case."""
    return f"{short_name(project_name)}-{base36(issue_id)}"


def parse_short_id(text: str) -> tuple[str, int] | None:
    """(the project's short name, the issue id) of a short id, in any case; None for anything else."""
    if len(text) > MAX_SHORT_ID_CHARS:
        return None
    found = _SHORT_ID.fullmatch(text.strip().upper())
    if found is None:
        return None
    number = int(found.group(2), 36)
    return (found.group(1), number) if 0 < number <= MAX_ISSUE_ID else None
