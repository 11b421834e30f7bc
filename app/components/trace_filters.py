"""The project, environment and release filters of /traces and /logs, kept in the URL
(`/traces?project=1&environment=production&release=shop@2.1`, read on every load, so a link is a
filtered list and Back works), and the selects that choose them: "All …" (the default: nothing a
user's app sends is hidden) or one of what the list's rows have had (`TraceReader.facets`).

Every handler is a public endpoint: it checks access itself and takes only a choice the select offers.
"""

from __future__ import annotations

import time
from typing import TypedDict
from urllib.parse import urlencode

import reflex as rx
from reflex.event import EventSpec

from app.components.forms import native_select
from app.console.form_state import project_of
from app.console.state import ConsoleState, bounded, one_of, trace_reader
from app.ingest.event_writer import ENVIRONMENT_LENGTH, NAME_LENGTH

ANY_PROJECT, ANY_ENVIRONMENT, ANY_RELEASE = "All projects", "All environments", "All releases"
FACETS_EVERY_S = 30.0  # what the selects offer is read again at most this often, per database and list
_facets: dict[tuple[str, str], tuple[float, dict[str, list[str]]]] = {}  # (database, of) → (read at, facets)


def filters_url(route: str, project: str = "", environment: str = "", release: str = "") -> str:
    """The URL of a list with these filters ("": any)."""
    wanted = {name: value for name, value in (("project", project), ("environment", environment), ("release", release))
              if value}
    return f"{route}?{urlencode(wanted)}" if wanted else route


def facets(of: str) -> dict[str, list[str]]:
    """What the selects of a list (`of`: "transactions" or "logs") offer, shared by every open list of
    this process for FACETS_EVERY_S (blocking)."""
    reader = trace_reader()
    key = (str(reader.engine.url), of)
    found = _facets.get(key)
    if found is None or time.monotonic() - found[0] > FACETS_EVERY_S:
        if len(_facets) > 100:
            _facets.clear()
        found = _facets[key] = (time.monotonic(), reader.facets(of))
    return found[1]


def offered(choices: list[str], chosen: str, any_label: str) -> list[str]:
    """A select's options: "All …", then `choices`, with the value chosen (from a link, or seen too long
    ago to be among them) offered too."""
    return [any_label, *([chosen] if chosen and chosen not in choices else []), *choices]


def project_options(projects: list[str], project: str, absent: str) -> tuple[list[str], str]:
    """A project select's options and its choice, for the project id `project` ("": every project) among
    `projects` ("id · name"); an id not among them is offered as "id · `absent`"."""
    chosen = next((p for p in projects if p.split(" ", 1)[0] == project), "")
    if project and not chosen:
        chosen = f"{project} · {absent}"
    return offered(projects, chosen, ANY_PROJECT), chosen or ANY_PROJECT


class Filters(TypedDict):
    """The reader's keyword arguments for the filters chosen (`TraceReader.transactions`, `.logs`)."""

    project_id: int | None
    environment: str
    release: str


class TraceFilters(ConsoleState, mixin=True):
    """The filters of a list page; its `_read` passes `_filters()` to the reader and `_offer()`s the
    facets it read."""

    project: str = ""  # the project's id ("": all), from the URL
    environment: str = ""
    release: str = ""
    project_list: list[str] = [ANY_PROJECT]
    environment_list: list[str] = [ANY_ENVIRONMENT]
    release_list: list[str] = [ANY_RELEASE]
    project_choice: str = ANY_PROJECT  # the options shown as chosen
    environment_choice: str = ANY_ENVIRONMENT
    release_choice: str = ANY_RELEASE

    @rx.event
    async def load(self):  # noqa: ANN201 (the watcher, as ConsoleState.load returns it)
        """Open the list with the filters the URL names."""
        parameters = self.router.url.query_parameters
        project = bounded(parameters.get("project", ""))
        self.project = project if 0 < len(project) <= 18 and project.isascii() and project.isdigit() else ""
        self.environment = bounded(parameters.get("environment", ""), ENVIRONMENT_LENGTH)
        self.release = bounded(parameters.get("release", ""), NAME_LENGTH)
        return await ConsoleState.load(self)  # a mixin's handler stays its plain function

    def _filters(self) -> Filters:
        return {"project_id": int(self.project) if self.project else None, "environment": self.environment,
                "release": self.release}

    def _offer(self, found: dict[str, list[str]]) -> None:
        """Offer the facets read (`facets()`), and show the filters chosen as chosen."""
        self.project_list, self.project_choice = project_options(found["project"], self.project, "(nothing stored)")
        self.environment_list = offered(found["environment"], self.environment, ANY_ENVIRONMENT)
        self.release_list = offered(found["release"], self.release, ANY_RELEASE)
        self.environment_choice = self.environment or ANY_ENVIRONMENT
        self.release_choice = self.release or ANY_RELEASE

    def _go(self, project: str, environment: str, release: str) -> EventSpec:
        return rx.redirect(filters_url(self.live_route, project, environment, release))

    @rx.event
    def set_project(self, choice: str):  # noqa: ANN201 (a redirect to the list's URL)
        if not self._admit():
            return None
        project_id = project_of(one_of(choice, self.project_list, ANY_PROJECT))
        return self._go(str(project_id) if project_id is not None else "", self.environment, self.release)

    @rx.event
    def set_environment(self, choice: str):  # noqa: ANN201
        if not self._admit():
            return None
        chosen = one_of(choice, self.environment_list[1:], "")
        return self._go(self.project, chosen, self.release)

    @rx.event
    def set_release(self, choice: str):  # noqa: ANN201
        if not self._admit():
            return None
        return self._go(self.project, self.environment, one_of(choice, self.release_list[1:], ""))


def filter_selects(state: type[TraceFilters], prefix: str) -> rx.Component:
    """The selects of a list's filters (`prefix`-project, -environment, -release), each shown when it
    has something to choose: the project's when there are several."""
    return rx.fragment(
        rx.cond(state.project_list.length() > 2,
                native_select(state.project_list, state.project_choice, state.set_project, f"{prefix}-project")),
        rx.cond(state.environment_list.length() > 1,
                native_select(state.environment_list, state.environment_choice, state.set_environment,
                              f"{prefix}-environment")),
        rx.cond(state.release_list.length() > 1,
                native_select(state.release_list, state.release_choice, state.set_release, f"{prefix}-release")),
    )
