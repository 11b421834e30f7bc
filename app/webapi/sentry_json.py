"""Lookout's rows in the shapes of Sentry's web API (what sentry-cli and Sentry's MCP server parse):
organizations, projects, issues, users, activity entries and releases. Pure functions of what the
handlers read; the event's shape is in event_json.py.

Ids are strings (sentry-cli refuses numbers), times ISO 8601 with `Z` (the MCP server refuses
`+00:00`), and URLs absolute (the MCP server refuses relative ones).
"""

from __future__ import annotations

import datetime
from typing import Any

from app.inbox import states
from app.inbox.activity import Entry
from app.releases.health import ReleaseHealth

ORG_SLUG, ORG_NAME, ORG_ID = "lookout", "Lookout", "1"  # Lookout has one organization; any slug names it
# Lookout's statuses as Sentry's (status, substatus): a regression is unresolved, as in Sentry.
STATUSES = {
    states.UNRESOLVED: ("unresolved", "ongoing"),
    states.REGRESSED: ("unresolved", "regressed"),
    states.RESOLVED: ("resolved", None),
    states.IGNORED: ("ignored", "archived_forever"),
}
# A timeline entry's kind as Sentry's activity type.
ACTIVITY_TYPES = {"assigned": "assigned", "merged": "merge", "unmerged": "unmerge_destination", "comment": "note"}
STATUS_ACTIVITY = {"resolved": "set_resolved", "ignored": "set_ignored", "unresolved": "set_unresolved",
                   "regressed": "set_regression"}


def iso(moment: float | None) -> str | None:
    """Unix time as Sentry writes it: `2026-11-26T12:00:00.123000Z`."""
    if moment is None:
        return None
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat().replace("+00:00", "Z")


def organization() -> dict[str, Any]:
    """No `links`: the MCP server would send a region URL back that must be https (see docs/web-api.md)."""
    return {"id": ORG_ID, "slug": ORG_SLUG, "name": ORG_NAME, "status": {"id": "active", "name": "active"},
            "features": [], "require2FA": False, "isEarlyAdopter": False}


def project(project_id: int, name: str, created_at: float | None = None) -> dict[str, Any]:
    return {"id": str(project_id), "slug": name, "name": name, "platform": None, "dateCreated": iso(created_at),
            "isMember": True, "hasAccess": True, "status": "active", "features": [],
            "organization": {"id": ORG_ID, "slug": ORG_SLUG, "name": ORG_NAME}}


def user(user_id: int | None, name: str) -> dict[str, Any]:
    """A console user as Sentry's user. Lookout keeps no e-mail addresses: the name stands in for one
    (sentry-cli's `info` shows it as the user)."""
    return {"id": str(user_id) if user_id is not None else name, "name": name, "username": name, "email": name,
            "isActive": True}


def member(user_id: int, name: str, role: str) -> dict[str, Any]:
    """A console user as an organization member (Sentry's roles: a maintainer is an admin)."""
    sentry_role = "admin" if role == "maintainer" else "member"
    return {"id": str(user_id), "email": name, "name": name, "user": user(user_id, name), "role": sentry_role,
            "orgRole": sentry_role, "roleName": role.capitalize(), "pending": False, "expired": False}


def assignee(name: str, ids: dict[str, int]) -> dict[str, Any] | None:
    """Sentry's `assignedTo`; `ids`: console user ids by name (one of LOOKOUT_CONSOLE_USERS has none)."""
    if not name:
        return None
    return {"type": "user", "id": str(ids.get(name, name)), "name": name, "email": name}


def issue(row: dict[str, Any], base: str, users: int, ids: dict[str, int],
          ignore: tuple[float | None, int | None] | None = None) -> dict[str, Any]:
    """An issue as IssueSearch shows it (`short_id`, `project_name`, `assignee`), in Sentry's shape;
    `ignore`: when an ignored one comes back (states.ignore_ends)."""
    status, substatus = STATUSES.get(row["status"], ("unresolved", "ongoing"))
    kind = "error" if row["kind"] == "error" else "default"
    error_type, _, value = row["title"].partition(": ")
    details: dict[str, Any] = {}
    if row["status"] == states.RESOLVED and row["resolved_in_release"]:
        details = {"inNextRelease": True, "inRelease": None}
    if ignore is not None and (ignore[0] is not None or ignore[1] is not None):
        substatus = "archived_until_condition_met"
        details = ({"ignoreUntil": iso(ignore[0])} if ignore[0] is not None
                   else {"ignoreCount": max(0, (ignore[1] or 0) - row["event_count"])})  # events still to come
    return {
        "id": str(row["id"]), "shortId": row["short_id"], "title": row["title"], "culprit": row["culprit"] or None,
        "level": row["level"], "status": status, "substatus": substatus, "statusDetails": details,
        "firstSeen": iso(row["first_seen"]), "lastSeen": iso(row["last_seen"]),
        "count": str(row["event_count"]), "userCount": users,
        "permalink": f"{base}/organizations/{ORG_SLUG}/issues/{row['id']}/",  # app/webapi/links.py
        "project": {"id": str(row["project_id"]), "slug": row["project_name"], "name": row["project_name"]},
        "type": kind, "issueType": "error", "issueCategory": "error",
        "metadata": {"title": row["title"], "type": error_type if value else None, "value": value or row["title"]},
        "assignedTo": assignee(row["assignee"], ids), "isUnhandled": False, "hasSeen": True,
        "isBookmarked": False, "isSubscribed": False, "isPublic": False, "numComments": 0, "shareId": None,
        "annotations": [], "logger": None,
    }


def activity(number: int, entry: Entry, ids: dict[str, int]) -> dict[str, Any]:
    """A timeline entry as Sentry's activity item; its id is its place in the timeline (a comment's
    id is the comment's, "note-N")."""
    if entry.kind == "status":
        word = entry.text.split(" ")[0]
        kind, data = STATUS_ACTIVITY.get(word, "set_" + word), {"text": entry.text}
    else:
        kind, data = ACTIVITY_TYPES.get(entry.kind, entry.kind), {"text": entry.text}
    if entry.kind == "comment":
        data = {"text": entry.body}
    who = None if entry.actor == states.SYSTEM else user(ids.get(entry.actor), entry.actor)
    item_id = f"note-{entry.comment_id}" if entry.comment_id is not None else str(number)
    return {"id": item_id, "type": kind, "dateCreated": iso(entry.at), "user": who, "data": data}


def release(number: int, version: str, first: float | None, last: float | None, new_groups: int,
            projects: list[dict[str, Any]]) -> dict[str, Any]:
    """A release as Sentry's: Lookout knows the versions its events and sessions named, and when (no
    commits, deploys or authors)."""
    short = version.partition("@")[2] or version
    return {"id": number, "version": version, "shortVersion": short, "status": "open", "ref": None, "url": None,
            "dateCreated": iso(first), "dateReleased": None, "firstEvent": iso(first), "lastEvent": iso(last),
            "newGroups": new_groups, "lastCommit": None, "lastDeploy": None, "authors": [], "commitCount": 0,
            "deployCount": 0, "owner": None, "data": {}, "projects": projects}


def release_project(project_id: int, name: str, new_groups: int, has_health_data: bool,
                    health_data: dict[str, Any] | None = None) -> dict[str, Any]:
    """A project of a release, with its health when it was asked for (`health=1`)."""
    found = {"id": project_id, "slug": name, "name": name, "newGroups": new_groups, "platform": None,
             "platforms": [], "hasHealthData": has_health_data}
    return found if health_data is None else {**found, "healthData": health_data}


def health_data(health: ReleaseHealth, stats: dict[str, list[list[float]]]) -> dict[str, Any]:
    """A release's health in one project, as Sentry's `healthData` (percentages 0-100; None where
    there is nothing to divide by)."""
    return {"durationP50": None, "durationP90": None, "crashFreeUsers": health.crash_free_users,
            "crashFreeSessions": health.crash_free_sessions, "sessionsCrashed": health.crashed,
            "sessionsErrored": health.errored, "totalUsers": health.users,
            "totalUsers24h": health.users_24h, "totalProjectUsers24h": health.project_users_24h,
            "totalSessions": health.sessions, "totalSessions24h": health.sessions_24h,
            "totalProjectSessions24h": health.project_sessions_24h, "adoption": health.users_adoption,
            "sessionsAdoption": health.adoption, "stats": stats, "hasHealthData": health.sessions > 0}
