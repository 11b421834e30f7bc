"""The /releases page's state: release health (app/releases/health.py, docs/releases.md) per project and
release, last seen first, of every project unless the select (shown when there are several projects)
or the URL names one (`/releases?project=2`); with `&release=<version>`, that release's sessions over
time by how they ended (the last 24 hours by hour or 14 days by day, UTC). Each row links to the
issues its events are in (`/issues?query=release:"<version>"&project=<id>`). It re-reads itself every
2 s while open.

Every handler is a public endpoint: it checks access itself (ConsoleState); the URL's project is read
as digits or not at all, its release as text of at most a release's length, the period and the
select's choice only when they are ones the page offers."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import urlencode

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.trace_filters import ANY_PROJECT, project_options
from app.console.form_state import project_of, row_id
from app.console.state import ConsoleState, ago, bounded, database, one_of
from app.ingest.event_writer import NAME_LENGTH
from app.projects.registry import Projects
from app.releases import health
from app.releases.health import ReleaseHealth

PERIOD_LABELS = {"24h": "24 hours", "14d": "14 days"}
PERIODS = [(period, PERIOD_LABELS[period]) for period in health.PERIODS]  # the chart's switch
LABEL_FORMAT = {"24h": "%H:00", "14d": "%m-%d"}  # a bucket's label on the chart's axis (UTC)
NONE = "—"  # a figure with nothing to count


def percent(value: float | None) -> str:
    """A share as the page shows it: "—" with nothing to divide by, "100 %" for all of it, else to one
    decimal, rounded half up ("81.3 %" of 81.25), without a trailing ".0" ("75 %"), and never rounded
    up to 100 ("99.9 %" of 99.96)."""
    if value is None:
        return NONE
    if value >= 100:
        return "100 %"
    shown = min(Decimal(repr(value)).quantize(Decimal("0.1"), ROUND_HALF_UP), Decimal("99.9"))
    return f"{str(shown).removesuffix('.0')} %"


def release_search(version: str) -> str:
    """The issue search for the events of `version`: its value quoted, with `\\` and `"` escaped as
    the search grammar reads a quoted value (app/inbox/search/grammar.py `_quoted`)."""
    return 'release:"' + version.replace("\\", "\\\\").replace('"', '\\"') + '"'


def releases_url(project: str = "", release: str = "") -> str:
    """The page's URL for a project's releases ("": every project's), with a release's chart ("": none)."""
    wanted = {name: value for name, value in (("project", project), ("release", release)) if value}
    return f"{routes.RELEASES}?{urlencode(wanted)}" if wanted else routes.RELEASES


def _when(timestamp: float | None, now: float) -> str:
    return NONE if timestamp is None else ago(timestamp, now)


def _date(timestamp: float | None) -> str:
    return "" if timestamp is None else datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def release_fields(found: ReleaseHealth, now: float) -> dict[str, str]:
    """One release of one project as the page shows it: every string from outside as text."""
    project_id = str(found.project_id)
    return {
        "project_id": project_id, "project": found.project, "version": found.version,
        "sessions": f"{found.sessions:,}", "crash_free_sessions": percent(found.crash_free_sessions),
        "crash_free_users": percent(found.crash_free_users), "errored": f"{found.errored:,}",
        "abnormal": f"{found.abnormal:,}", "crashed": f"{found.crashed:,}", "users": f"{found.users:,}",
        "adoption": percent(found.adoption), "first_seen": _when(found.first_seen, now),
        "first_seen_at": _date(found.first_seen), "last_seen": _when(found.last_seen, now),
        "last_seen_at": _date(found.last_seen), "new_issues": f"{found.new_issues:,}",
        "chart": releases_url(project_id, found.version),
        "issues": routes.issues_search(release_search(found.version), project=project_id),
    }


def chart_points(rows: list[dict[str, Any]], period: str) -> list[dict[str, Any]]:
    """The chart's data: each bucket's label (UTC) and its sessions by how they ended."""
    fmt = LABEL_FORMAT.get(period, LABEL_FORMAT["14d"])
    return [{"label": datetime.fromtimestamp(row["start"], UTC).strftime(fmt),
             **{status: int(row[status]) for status in health.STATUSES}} for row in rows]


@dataclass(frozen=True)
class Read:
    releases: list[ReleaseHealth]
    projects: list[str]  # every project, "id · name"
    charted: ReleaseHealth | None  # the release the URL names, when sessions or events name it
    series: list[dict[str, Any]]  # its sessions over the period (health.series)


def read_releases(project_id: int | None, version: str, period: str, now: float) -> Read:
    """The releases of the project (None: of every project), the projects, and the chart of `version`
    ("": none; of the release last seen when several projects have it) (blocking)."""
    engine = database()
    found = health.releases(engine, project_id, now=now)
    projects = [f"{p.id} · {p.name}" for p in Projects(engine).all()]
    charted = next(iter(health.releases(engine, project_id, version, now=now, limit=1)), None) if version else None
    series = health.series(engine, charted.project_id, charted.version, period, now) if charted is not None else []
    return Read(found, projects, charted, series)


class ReleasesState(ConsoleState, rx.State):
    live_route = routes.RELEASES
    rows: list[dict[str, str]] = []
    searched: bool = False  # read once (until then no empty state is shown)
    project: str = ""  # the project's id ("": every project), from the URL
    project_list: list[str] = [ANY_PROJECT]
    project_choice: str = ANY_PROJECT
    release: str = ""  # the version whose chart the URL asks for ("": none)
    charted: bool = False  # sessions or events name that release: its chart is shown
    chart_project: str = ""  # the charted release's project (its name)
    chart_total: str = ""  # "12 sessions started"
    chart: list[dict[str, Any]] = []  # {"label", "healthy", "errored", "abnormal", "crashed"} per hour or day
    period: str = PERIODS[0][0]  # of the chart: "24h" or "14d"
    close_href: str = routes.RELEASES  # the list without the chart

    async def _read(self) -> None:
        parameters = self.router.url.query_parameters
        project_id = row_id(parameters.get("project"))
        version = bounded(parameters.get("release", ""), NAME_LENGTH)
        now = time.time()
        read = await anyio.to_thread.run_sync(read_releases, project_id, version, self.period, now)
        self.project = str(project_id) if project_id is not None else ""
        self.project_list, self.project_choice = project_options(read.projects, self.project, "(no such project)")
        self.rows = [release_fields(r, now) for r in read.releases]
        self.release, self.charted, self.close_href = version, read.charted is not None, releases_url(self.project)
        self.chart_project = read.charted.project if read.charted is not None else ""
        self.chart = chart_points(read.series, self.period)
        total = sum(row[status] for row in read.series for status in health.STATUSES)
        self.chart_total = f"{total:,} session{'' if total == 1 else 's'} started"
        self.searched = True

    @rx.event
    async def show_period(self, period: str) -> None:
        """The chart over the last 24 hours (hourly) or 14 days (daily)."""
        self.period = one_of(period, [p for p, _ in PERIODS], self.period)
        await self._show()

    @rx.event
    def set_project(self, choice: str):  # noqa: ANN201 (a redirect to the page's URL)
        if not self._admit():
            return None
        project_id = project_of(one_of(choice, self.project_list, ANY_PROJECT))
        return rx.redirect(releases_url(str(project_id) if project_id is not None else ""))
