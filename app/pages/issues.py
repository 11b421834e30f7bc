"""`/issues`: the inbox's issues, newest activity first, with search, a status filter and pages.
New events show up without a reload: while the page is open it re-reads the list every 2 s."""

from __future__ import annotations

import time

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.layout import layout
from app.components.refused import unless_refused
from app.console.state import ConsoleState, ago, bounded, inbox_reader, one_of
from app.inbox.reading import InboxReader
from app.presentation.event import sparkline
from app.protocol.fields import whole

TITLE = "Issues · Lookout"
PAGE_SIZE = 25
STATUSES = ["open", "unresolved", "regressed", "resolved", "ignored", "all"]
ANY = "any"  # a filter's "no filter" choice (a select's value cannot be empty)
SORTS = {"last seen": "last_seen", "events": "count"}
HEADERS = ("Issue", "Level", "Status", "Events", "Last 24 h", "Last seen")


FACETS_EVERY_S = 30.0  # filter choices are re-read at most this often (they are DISTINCTs over the events)
_facets: tuple[float, dict[str, list[str]]] = (float("-inf"), {})


def filter_choices(inbox: InboxReader) -> dict[str, list[str]]:
    """The filters' choices from what is stored, shared by every open list for FACETS_EVERY_S."""
    global _facets
    read_at, found = _facets
    if time.monotonic() - read_at > FACETS_EVERY_S:
        found = inbox.facets()
        _facets = (time.monotonic(), found)
    return found


class IssuesState(ConsoleState, rx.State):
    live_route = routes.ISSUES
    rows: list[dict[str, str]] = []
    total: int = 0
    page_number: int = 0
    status: str = "open"
    search: str = ""
    level: str = ANY
    environment: str = ANY
    release: str = ANY
    project: str = ANY  # "id · name"
    sort: str = "last seen"
    # Choices for the filters, from what is stored.
    levels: list[str] = [ANY]
    environments: list[str] = [ANY]
    releases: list[str] = [ANY]
    projects: list[str] = [ANY]

    @rx.var
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))

    async def _read(self) -> None:
        status = None if self.status == "all" else self.status
        chosen = {name: "" if value == ANY else value
                  for name, value in (("level", self.level), ("environment", self.environment), ("release", self.release))}
        project_id = self.project.split(" ", 1)[0]  # "id · name", or ANY
        project = int(project_id) if project_id.isdigit() else None
        now = time.time()

        def read() -> tuple[list[dict], int, dict[int, list[int]], dict[str, list[str]]]:
            inbox = inbox_reader()
            found, total = inbox.issues(status, PAGE_SIZE, self.page_number * PAGE_SIZE, self.search,
                                        sort=SORTS.get(self.sort, "last_seen"), project=project, **chosen)
            return found, total, inbox.hourly([i["id"] for i in found], now), filter_choices(inbox)

        found, total, hourly, facets = await anyio.to_thread.run_sync(read)
        self.total = total
        self.levels, self.environments = [ANY, *facets["level"]], [ANY, *facets["environment"]]
        self.releases, self.projects = [ANY, *facets["release"]], [ANY, *facets["project"]]
        self.rows = [{
            "id": str(issue["id"]), "title": issue["title"], "culprit": issue["culprit"],
            "level": issue["level"], "status": issue["status"], "count": str(issue["event_count"]),
            "last_seen": ago(issue["last_seen"], now), "href": f"{routes.ISSUE}?id={issue['id']}",
            "spark": sparkline(hourly[issue["id"]]),
        } for issue in found]

    @rx.event
    async def set_status_filter(self, status: str) -> None:
        await self._filter("status", one_of(status, STATUSES, "open"))

    async def _filter(self, name: str, value: str) -> None:
        setattr(self, name, value)
        self.page_number = 0
        await self._show()

    # Levels, environments, releases and projects are matched as text by the store (a stale
    # choice simply finds nothing), so any bounded value will do.
    @rx.event
    async def set_level(self, value: str) -> None:
        await self._filter("level", bounded(value) or ANY)

    @rx.event
    async def set_environment(self, value: str) -> None:
        await self._filter("environment", bounded(value) or ANY)

    @rx.event
    async def set_release(self, value: str) -> None:
        await self._filter("release", bounded(value) or ANY)

    @rx.event
    async def set_project(self, value: str) -> None:
        await self._filter("project", bounded(value) or ANY)

    @rx.event
    async def set_sort(self, value: str) -> None:
        await self._filter("sort", one_of(value, list(SORTS), "last seen"))

    @rx.event
    async def set_search(self, search: str) -> None:
        await self._filter("search", bounded(search))

    @rx.event
    async def turn(self, step: int) -> None:
        if whole(step):
            self.page_number = min(max(0, self.page_number + step), self.pages - 1)
        await self._show()


def issue_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(
            rx.link(row["title"], href=row["href"], class_name="issue-title"),
            rx.text(row["culprit"], size="1", color_scheme="gray"),
        ),
        rx.table.cell(rx.badge(row["level"])),
        rx.table.cell(row["status"], class_name="issue-status"),
        rx.table.cell(row["count"], class_name="issue-count"),
        rx.table.cell(rx.text(row["spark"], font_family="monospace", white_space="pre", title="events per hour, last 24 h",
                              class_name="issue-spark")),
        rx.table.cell(row["last_seen"]),
        class_name="issue-row",
    )


def page() -> rx.Component:
    return layout(
        rx.heading("Issues", size="7", id="page-title"),
        unless_refused(
            IssuesState,
            rx.vstack(
                rx.hstack(
                    rx.input(placeholder="Search titles and culprits", value=IssuesState.search,
                             on_change=IssuesState.set_search.debounce(300), id="issues-search", width="20em"),
                    rx.select(STATUSES, value=IssuesState.status, on_change=IssuesState.set_status_filter,
                              id="issues-status"),
                    rx.select(IssuesState.levels, value=IssuesState.level, on_change=IssuesState.set_level, id="issues-level"),
                    rx.select(IssuesState.environments, value=IssuesState.environment,
                              on_change=IssuesState.set_environment, id="issues-environment"),
                    rx.select(IssuesState.releases, value=IssuesState.release, on_change=IssuesState.set_release,
                              id="issues-release"),
                    rx.cond(IssuesState.projects.length() > 2, rx.select(
                        IssuesState.projects, value=IssuesState.project, on_change=IssuesState.set_project,
                        id="issues-project")),
                    rx.select(list(SORTS), value=IssuesState.sort, on_change=IssuesState.set_sort, id="issues-sort"),
                    rx.text(IssuesState.total.to_string() + " issues", id="issues-total"),
                    align="center", spacing="3",
                ),
                rx.table.root(
                    rx.table.header(rx.table.row(*[rx.table.column_header_cell(h) for h in HEADERS])),
                    rx.table.body(rx.foreach(IssuesState.rows, issue_row)),
                    width="100%", id="issues-table",
                ),
                rx.hstack(
                    rx.button("Newer", on_click=IssuesState.turn(-1), disabled=IssuesState.page_number == 0,
                              variant="outline", id="issues-previous"),
                    rx.text("Page ", (IssuesState.page_number + 1).to_string(), " of ", IssuesState.pages.to_string()),
                    rx.button("Older", on_click=IssuesState.turn(1),
                              disabled=IssuesState.page_number + 1 >= IssuesState.pages, variant="outline",
                              id="issues-next"),
                    align="center", spacing="3",
                ),
                width="100%",
            ),
        ),
    )
