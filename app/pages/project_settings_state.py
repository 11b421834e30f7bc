"""The /settings page's state: one project's inbound filters, PII scrubbing options, quotas and
source-map options (its dev servers), as an allowed client sees them and a maintainer edits them, and what each filter dropped
(app/projects/options_store.py).

Every handler is a public endpoint (app/console/state.py): it reads through `_show()`, changes
something only for `_maintainer()`, and takes each argument as possibly anything: a filter or option
among the known ones, a real bool, bounded text (a list one entry a line, a quota a whole number, a
dev server an origin; refused past its bound with a sentence in `error`, never cut)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import anyio.to_thread
import reflex as rx

from app.console.form_state import FormState, choice_of, project_of
from app.console.state import database, one_of
from app.inbox.reading import InboxReader
from app.projects.filter_options import LABELS, LISTS, MAX_LIST_CHARS, SWITCHES, FilterOptions, lines_of
from app.projects.options_store import FIELD_LISTS, MAX_FIELD_CHARS, MAX_FIELDS, ProjectOptionsStore
from app.projects.quota_options import MAX_TYPED_CHARS, WINDOWS, QuotaOptions, number_of
from app.projects.registry import Projects
from app.projects.sourcemap_options import MAX_TYPED_CHARS as MAX_ORIGINS_CHARS, SourceMapOptions, origins_of
from reflex_lookout.scrubbing.settings import ScrubbingSettings

MAINTAINERS_ONLY = "Only a maintainer can change a project's settings."
NO_PROJECT = "Choose one of the projects."
OPTIONS = tuple(f.name for f in dataclasses.fields(ScrubbingSettings) if f.name not in FIELD_LISTS)
MAX_FIELDS_CHARS = MAX_FIELDS * (MAX_FIELD_CHARS + 1)  # a field list as typed, one name a line
TEXTS = {**dict.fromkeys(LISTS, MAX_LIST_CHARS), **dict.fromkeys(FIELD_LISTS, MAX_FIELDS_CHARS),
         **dict.fromkeys(WINDOWS, MAX_TYPED_CHARS), "dev_servers": MAX_ORIGINS_CHARS}


def fields_of(name: str, typed: str) -> tuple[str, ...]:
    """The field names of a scrubbing list as typed (one a line), or ValueError with a sentence (the
    count and length bounds: app/projects/options_store.py's `checked_scrubbing`)."""
    if len(typed) > MAX_FIELDS_CHARS:
        raise ValueError(f"The {FIELD_LISTS[name]}s are too long: at most {MAX_FIELDS} lines of {MAX_FIELD_CHARS} characters.")
    return tuple(line.strip() for line in typed.splitlines() if line.strip())


class ProjectOptionsState(FormState, rx.State):
    maintainers_only = MAINTAINERS_ONLY
    project: str = ""  # whose options the page shows ("id · name")
    read_for: str = ""  # whose options the form holds ("": none yet)
    filters: dict[str, bool] = {}  # each switch of FilterOptions
    options: dict[str, bool] = {}  # each switch of ScrubbingSettings
    # The lists, one entry a line, as shown or typed.
    error_messages: str = ""
    releases: str = ""
    client_ips: str = ""
    sensitive_fields: str = ""
    safe_fields: str = ""
    # The quotas (QuotaOptions' fields) as shown or typed: a whole number, 0 for no limit.
    per_minute: str = ""
    per_hour: str = ""
    dev_servers: str = ""  # SourceMapOptions' origins, one a line
    dropped: dict[str, int] = {}  # what each filter dropped, by filter name

    async def _read(self) -> None:
        self._reading(self._viewer())
        projects = await anyio.to_thread.run_sync(lambda: Projects(database()).all())
        self.projects = [choice_of(p.id, p.name) for p in projects]
        if self.project not in self.projects:
            self.project = self.projects[0] if self.projects else ""
        project_id = project_of(self.project)
        if project_id is None:
            return
        store = ProjectOptionsStore(database())
        (filters, scrubbing), quotas, maps, dropped = await anyio.to_thread.run_sync(
            lambda: (store.read(project_id), store.quotas(project_id), store.sourcemaps(project_id),
                     InboxReader(database()).dropped(project_id)))
        self.dropped = {name: dropped.get(name, 0) for name in LABELS}
        # A maintainer's form keeps what they typed until saved; a viewer sees the options as stored.
        if self.read_for != self.project or not self.may_change:
            self._fill(filters, scrubbing)
            for name in WINDOWS:
                setattr(self, name, str(getattr(quotas, name)))
            self.dev_servers = "\n".join(maps.dev_servers)
            self.read_for = self.project

    def _fill(self, filters: FilterOptions, scrubbing: ScrubbingSettings) -> None:
        self.filters = {name: getattr(filters, name) for name in SWITCHES}
        self.options = {name: getattr(scrubbing, name) for name in OPTIONS}
        for name in (*LISTS, *FIELD_LISTS):
            setattr(self, name, "\n".join(getattr(scrubbing if name in FIELD_LISTS else filters, name)))

    @rx.event
    async def load(self):  # noqa: ANN201 (the watcher, as ConsoleState.load returns it)
        self.read_for = ""  # a new visit shows the options as stored
        return await FormState.load(self)

    @rx.event
    async def choose_project(self, choice: str) -> None:
        """Any allowed client may pick whose options it sees."""
        if not self._admit():
            return
        self._forget()
        self.project, self.read_for = one_of(choice, self.projects, self.project), ""
        await self._show()

    # The form's fields: only a maintainer's form sends them.
    @rx.event
    def set_filter(self, name: str, on: bool) -> None:
        if self._maintainer() is not None and name in SWITCHES and isinstance(on, bool):
            self.filters = {**self.filters, name: on}

    @rx.event
    def set_option(self, name: str, on: bool) -> None:
        if self._maintainer() is not None and name in OPTIONS and isinstance(on, bool):
            self.options = {**self.options, name: on}

    @rx.event
    def set_text(self, name: str, text: str) -> None:
        if isinstance(name, str) and name in TEXTS:
            self._type(name, text, TEXTS[name])

    @rx.event
    async def save_filters(self) -> None:
        switches = {name: self.filters.get(name) is True for name in SWITCHES}
        typed = {name: getattr(self, name) for name in LISTS}

        def work(store: ProjectOptionsStore, project_id: int, by: str) -> None:
            lists = {name: lines_of(name, text) for name, text in typed.items()}
            store.set_filters(project_id, FilterOptions(**switches, **lists), by)

        await self._save(work, "Inbound filters")

    @rx.event
    async def save_scrubbing(self) -> None:
        switches = {name: self.options.get(name) is True for name in OPTIONS}
        typed = {name: getattr(self, name) for name in FIELD_LISTS}

        def work(store: ProjectOptionsStore, project_id: int, by: str) -> None:
            lists = {name: fields_of(name, text) for name, text in typed.items()}
            store.set_scrubbing(project_id, ScrubbingSettings(**switches, **lists), by)

        await self._save(work, "Data scrubbing")

    @rx.event
    async def save_quotas(self) -> None:
        typed = {name: getattr(self, name) for name in WINDOWS}

        def work(store: ProjectOptionsStore, project_id: int, by: str) -> None:
            store.set_quotas(project_id, QuotaOptions(**{name: number_of(name, text) for name, text in typed.items()}), by)

        await self._save(work, "Quotas")

    @rx.event
    async def save_sourcemaps(self) -> None:
        typed = self.dev_servers

        def work(store: ProjectOptionsStore, project_id: int, by: str) -> None:
            store.set_sourcemaps(project_id, SourceMapOptions(dev_servers=origins_of(typed)), by)

        await self._save(work, "Source maps")

    def _chosen(self) -> int | None:
        project_id = project_of(self.project) if self.project in self.projects else None
        if project_id is None:
            self.error = NO_PROJECT
        return project_id

    async def _save(self, work: Callable[[ProjectOptionsStore, int, str], None], what: str) -> None:
        """A maintainer's change to the chosen project's options, off the event loop (a list past its
        bound: a sentence in `error`, and the form keeps what was typed)."""
        if self._begin_change() is None or (project_id := self._chosen()) is None:
            return
        by, store = self.viewer or "this machine", ProjectOptionsStore(database())
        await self._change(lambda: work(store, project_id, by))
        if not self.error:
            self.notice = f"{what} saved for {self.project}."
            self.read_for = ""  # read back as stored
            await self._show()
