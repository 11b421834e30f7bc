"""The /issues page's state: the search in the URL (`/issues?query=…&sort=…&project=…`, read on every
load, so a link is a search and Back works), its page of issues, saved searches, and a selection
the bulk actions (app/pages/issues_bulk.py) work on.

Every handler is a public endpoint: it checks access itself and bounds what the client sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio.to_thread
import reflex as rx

from app import routes
from app.console.form_state import FormState, is_row_id, project_of
from app.console.state import ago, bounded, database, inbox_reader, one_of, triage
from app.inbox.saved_searches import PINNED, SavedSearches
from app.inbox.search import IssueSearch, SearchError
from app.inbox.search.grammar import MAX_QUERY_CHARS as MAX_QUERY
from app.pages import issues_bulk
from app.presentation.event import sparkline
from app.protocol.fields import whole

PAGE_SIZE = 25
DEFAULT_QUERY = "is:unresolved"  # Sentry's: what /issues opens on without a query in its URL
SORTS = {"date": "Last seen", "new": "First seen", "freq": "Events"}
ANY_PROJECT = "all projects"
MAX_SELECTED = 100  # issues picked by hand (more: "all N matching", in bounded chunks)
FACETS_EVERY_S = 30.0  # the projects offered are re-read at most this often
_projects: tuple[float, list[str]] = (float("-inf"), [])


def project_choices() -> list[str]:
    """The projects to filter by ("id · name"), shared by every open list for FACETS_EVERY_S."""
    global _projects
    read_at, found = _projects
    if time.monotonic() - read_at > FACETS_EVERY_S:
        found = inbox_reader().facets()["project"]
        _projects = (time.monotonic(), found)
    return found


@dataclass
class IssueRow:
    id: int
    short_id: str
    title: str
    culprit: str
    level: str
    status: str
    count: int
    last_seen: str
    href: str
    spark: str
    assignee: str


@dataclass
class SavedRow:
    id: int
    name: str
    href: str
    pinned: bool


class IssuesState(FormState, rx.State):
    live_route = routes.ISSUES
    query: str = ""  # the search shown, from the URL
    project: str = ""  # its project ("": all)
    # The bulk actions' (app/pages/issues_bulk.py):
    selected: list[int] = []  # the issues picked by hand
    all_matching: bool = False  # or every issue the search matches
    working: bool = False
    progress: str = ""  # "300 of 1,200 resolved"
    confirming_delete: bool = False
    sort: str = "date"
    problem: str = ""  # why the search in the URL does not parse
    searched: bool = False  # a search has been read (until then no empty state is shown)
    rows: list[IssueRow] = []
    total: int = 0
    capped: bool = False  # more match than the engine counts (app/inbox/search/engine.py): "10000+"
    page_number: int = 0
    project_list: list[str] = [ANY_PROJECT]
    saved: list[SavedRow] = []
    assignable: list[str] = []  # console users an issue can be assigned to

    @rx.var
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))

    @rx.var
    def project_choice(self) -> str:
        return next((p for p in self.project_list if p.split(" ", 1)[0] == self.project), ANY_PROJECT)

    @rx.event
    def ask_bulk_delete(self, asking: bool) -> None:
        if self._begin_change() is not None:
            self.confirming_delete = asking is True

    @rx.event(background=True)
    async def bulk(self, name: str) -> None:
        """Apply the action `name` to the issues picked, or to all the search matches."""
        await issues_bulk.apply(self, name)

    @rx.event
    async def load(self):  # noqa: ANN201 (the watcher, as ConsoleState.load returns it)
        """Open the search the URL names (a new URL is a new search: its first page, nothing selected)."""
        parameters = self.router.url.query_parameters
        query = bounded(parameters.get("query", DEFAULT_QUERY), MAX_QUERY)
        sort = one_of(parameters.get("sort", "date"), list(SORTS), "date")
        project = bounded(parameters.get("project", ""))
        project = project if 0 < len(project) <= 18 and project.isascii() and project.isdigit() else ""
        if (query, sort, project) != (self.query, self.sort, self.project):
            self.page_number, self.selected, self.all_matching = 0, [], False
        self.query, self.sort, self.project = query, sort, project
        return await FormState.load(self)

    async def _read(self) -> None:
        found_viewer = self._viewer()
        self._reading(found_viewer)
        viewer = found_viewer.name if found_viewer is not None else ""
        project = int(self.project) if self.project else None
        now = time.time()

        def read():  # noqa: ANN202 (the page's data, read off the event loop)
            found = IssueSearch(database()).search(self.query, viewer=viewer, sort=self.sort, project=project,
                                                    limit=PAGE_SIZE, offset=self.page_number * PAGE_SIZE, now=now)
            hourly = inbox_reader().hourly([i["id"] for i in found.issues], now)
            return (found, hourly, project_choices(), SavedSearches(database()).visible_to(viewer),
                    triage().assignable())

        try:
            found, hourly, projects, saved, self.assignable = await anyio.to_thread.run_sync(read)
        except SearchError as exc:
            self.problem, self.rows, self.total = str(exc), [], 0
            return
        self.problem, self.total, self.capped, self.searched = "", found.total, found.capped, True
        self.project_list = [ANY_PROJECT, *projects]
        self.saved = [SavedRow(s.id, s.name, routes.issues_search(s.query, s.sort), s.pinned) for s in saved]
        self.rows = [IssueRow(
            id=issue["id"], short_id=issue["short_id"], title=issue["title"], culprit=issue["culprit"],
            level=issue["level"], status=issue["status"], count=issue["event_count"], last_seen=ago(issue["last_seen"], now),
            href=f"{routes.ISSUE}?id={issue['id']}", spark=sparkline(hourly[issue["id"]]), assignee=issue["assignee"],
        ) for issue in found.issues]

    @rx.event
    async def search(self, form: dict):  # noqa: ANN201 (a redirect to the search's URL)
        """Open the search typed in the box: its URL, so that a link is the search and Back works."""
        if not self._admit():
            return None
        text = bounded(form.get("query") if isinstance(form, dict) else None, MAX_QUERY)
        return rx.redirect(routes.issues_search(text.strip(), self.sort, self.project))

    @rx.event
    def set_sort(self, sort: str):  # noqa: ANN201
        if not self._admit():
            return None
        return rx.redirect(routes.issues_search(self.query, one_of(sort, list(SORTS), "date"), self.project))

    @rx.event
    def set_project(self, choice: str):  # noqa: ANN201
        if not self._admit():
            return None
        project_id = project_of(bounded(choice))
        return rx.redirect(routes.issues_search(self.query, self.sort, str(project_id) if project_id is not None else ""))

    @rx.event
    async def turn(self, step: int) -> None:
        if whole(step) and abs(step) <= 1:
            self.page_number = min(max(0, self.page_number + step), self.pages - 1)
        await self._show()

    @rx.event
    def toggle(self, issue_id: int) -> None:
        """Pick an issue of the page, or put it back."""
        if not self._admit() or not is_row_id(issue_id):
            return
        if issue_id in self.selected:
            self.selected = [i for i in self.selected if i != issue_id]
        elif len(self.selected) < MAX_SELECTED:
            self.selected = [*self.selected, issue_id]
        self.all_matching = False

    @rx.event
    def toggle_page(self, _checked: object = None) -> None:
        """Pick every issue shown, or none when they all are (the box's own state is not trusted)."""
        if not self._admit():
            return
        shown = [row.id for row in self.rows]
        self.selected = [] if shown and set(shown) <= set(self.selected) else shown[:MAX_SELECTED]
        self.all_matching = False

    @rx.event
    def pick_all_matching(self, picked: bool) -> None:
        if self._admit():
            self.all_matching = picked is True

    @rx.event
    async def save_search(self, form: dict) -> None:
        """Save the search shown for oneself, or, with `pinned` (a maintainer), for everyone."""
        self._forget()
        viewer = self._viewer() if self._admit() else None
        if viewer is None or not isinstance(form, dict):
            return
        pinned = form.get("pinned") in ("on", True)
        if pinned and not viewer.may_change:
            self.error = "Only a maintainer can pin a search for everyone."
            return
        name = bounded(form.get("name"))
        saved = await self._change(lambda: SavedSearches(database()).save(
            PINNED if pinned else viewer.name, name, self.query, self.sort))
        if saved is not None:
            self.notice = f"Saved “{name.strip()}”."
        await self._show()

    @rx.event
    async def delete_saved(self, search_id: int) -> None:
        self._forget()
        viewer = self._viewer() if self._admit() else None
        if viewer is None or not is_row_id(search_id):
            return
        await self._change(lambda: SavedSearches(database()).delete(search_id, viewer.name, viewer.may_change))
        await self._show()
