"""Each project's options: its inbound filters (app/projects/filter_options.py), its PII scrubbing
options (reflex_lookout/scrubbing/settings.py), its quotas (app/projects/quota_options.py) and its
source-map options (app/projects/sourcemap_options.py), a row of `inbox_project_settings` (the table
keeps the name migration 0018 made it with); a project without one has the dataclasses' defaults.
Also what each filter dropped, counted in `inbox_count` (kind "filtered", the key a filter's name) by
the ingest transaction that dropped it.

Each part is a JSON object of its dataclass's fields in one text column, not a column per field:
the lists (globs, addresses, field names) would each need a table of their own, and a filter or
option added later needs no migration (a field missing from a row has its default; one the code no
longer knows is ignored). The objects are bounded before they are written (`checked`): a few KB.
A row that cannot be read (broken JSON, a wrong type) gives that project the defaults, with a
warning, and sinks nothing else.

Ingest asks for a project's options for each event, so each process keeps what it read for
CACHE_S seconds (as app/alerts/rules.py does): a change made on the settings page applies to this
process at once and to other workers within CACHE_S.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
import weakref
from typing import Any, TypeVar

import sqlalchemy
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from app.projects.filter_options import FilterOptions
from app.projects.quota_options import QuotaOptions
from app.projects.sourcemap_options import SourceMapOptions, off_loopback, origin_of
from app.projects.tables import PROJECT_OPTIONS as TABLE, PROJECTS
from reflex_lookout.scrubbing.settings import ScrubbingSettings

logger = logging.getLogger(__name__)
CACHE_S = 5.0
FILTERED = "filtered"  # the inbox_count kind of what a filter dropped
MAX_FIELDS = 50  # sensitive or safe field names
MAX_FIELD_CHARS = 100
FIELD_LISTS = {"sensitive_fields": "sensitive field", "safe_fields": "safe field"}
S = TypeVar("S", FilterOptions, ScrubbingSettings, QuotaOptions, SourceMapOptions)
Both = tuple[FilterOptions, ScrubbingSettings]
# Per database (engine), per project: (when read, monotonic seconds; the options then).
_cache: weakref.WeakKeyDictionary[sqlalchemy.Engine, dict[int, tuple[float, Both]]] = weakref.WeakKeyDictionary()
# The same for the source-map options, which only symbolication asks for.
_maps_cache: weakref.WeakKeyDictionary[sqlalchemy.Engine, dict[int, tuple[float, SourceMapOptions]]] = (
    weakref.WeakKeyDictionary())
READ = select(TABLE.c.filters, TABLE.c.scrubbing).where(TABLE.c.project_id == sqlalchemy.bindparam("project_id"))
READ_QUOTAS = select(TABLE.c.quotas).where(TABLE.c.project_id == sqlalchemy.bindparam("project_id"))
READ_SOURCEMAPS = select(TABLE.c.sourcemaps).where(TABLE.c.project_id == sqlalchemy.bindparam("project_id"))


def checked_scrubbing(options: ScrubbingSettings) -> ScrubbingSettings:
    """`options`, or ValueError with a sentence naming what is out of bounds."""
    for field in dataclasses.fields(ScrubbingSettings):
        value = getattr(options, field.name)
        if field.name in FIELD_LISTS:
            what = FIELD_LISTS[field.name]
            if not isinstance(value, tuple) or not all(isinstance(name, str) for name in value):
                raise ValueError(f"The {what}s must be a list of names.")
            if len(value) > MAX_FIELDS:
                raise ValueError(f"At most {MAX_FIELDS} {what}s, one a line ({len(value)} given).")
            for number, name in enumerate(value, 1):
                if not 0 < len(name) <= MAX_FIELD_CHARS:
                    raise ValueError(f"The {what} on line {number} must have 1 to {MAX_FIELD_CHARS} characters.")
        elif not isinstance(value, bool):
            raise ValueError(f"The option {field.name} must be on or off.")
    return options


def checked_sourcemaps(options: SourceMapOptions) -> SourceMapOptions:
    """`options` checked (`SourceMapOptions.checked`), each dev server on this machine, or ValueError
    with a sentence. Loopback only, not the webhooks' policy (any public address, or a private one
    allowed): a dev server runs on the developer's own machine, and anyone with the project's DSN can
    make ingest ask it for paths."""
    checked = options.checked()
    for number, text in enumerate(options.dev_servers, 1):
        where = off_loopback(origin_of(text) or "")
        if where is not None:
            raise ValueError(f"The dev server on line {number} ({text!r}) is {where}: a dev server must be on "
                             "this machine, at localhost, 127.0.0.1 or [::1] (loopback).")
    return checked


def encoded(options: FilterOptions | ScrubbingSettings | QuotaOptions | SourceMapOptions) -> str:
    return json.dumps(dataclasses.asdict(options))


def decoded(kind: type[S], text: str) -> S:
    """The options a stored JSON object holds: its known fields (lists as tuples), the defaults for
    the rest; ValueError when it is no object or out of bounds."""
    found = json.loads(text)
    if not isinstance(found, dict):
        raise ValueError("not a JSON object")
    known = {f.name for f in dataclasses.fields(kind)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in found.items() if k in known}
    made = kind(**values)
    checked = checked_scrubbing(made) if isinstance(made, ScrubbingSettings) else made.checked()
    return checked  # type: ignore[return-value]  # the same type as `made`, S


class ProjectOptionsStore:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def filters_of(self, project_id: int) -> FilterOptions:
        return self._cached(project_id)[0]

    def scrubbing_of(self, project_id: int) -> ScrubbingSettings:
        return self._cached(project_id)[1]

    def read(self, project_id: int) -> Both:
        """The project's options as stored now (the defaults when it has no row, or a broken one)."""
        with self.engine.connect() as connection:
            row = connection.execute(READ, {"project_id": project_id}).first()
        if row is None:
            return FilterOptions(), ScrubbingSettings()
        return self._part(FilterOptions, row.filters, project_id), self._part(ScrubbingSettings, row.scrubbing, project_id)

    def quotas(self, project_id: int) -> QuotaOptions:
        """The project's quotas as stored now (app/ingest/quotas.py keeps what it read for CACHE_S)."""
        with self.engine.connect() as connection:
            text = connection.execute(READ_QUOTAS, {"project_id": project_id}).scalar()
        return QuotaOptions() if text is None else self._part(QuotaOptions, text, project_id)

    def sourcemaps(self, project_id: int) -> SourceMapOptions:
        """The project's source-map options as stored now."""
        with self.engine.connect() as connection:
            text = connection.execute(READ_SOURCEMAPS, {"project_id": project_id}).scalar()
        return SourceMapOptions() if text is None else self._part(SourceMapOptions, text, project_id)

    def dev_servers_of(self, project_id: int) -> tuple[str, ...]:
        """The dev servers the project's frames may be mapped with (symbolication asks for each
        event; kept CACHE_S, as the filters are)."""
        now = time.monotonic()
        known = _maps_cache.setdefault(self.engine, {})
        found = known.get(project_id)
        if found is None or now - found[0] > CACHE_S:
            found = known[project_id] = (now, self.sourcemaps(project_id))
        return found[1].dev_servers

    @staticmethod
    def _part(kind: type[S], text: str, project_id: int) -> S:
        try:
            return decoded(kind, text)
        except (ValueError, TypeError) as exc:
            logger.warning("project %d: its stored %s are unreadable (%s); the defaults apply", project_id,
                           kind.__name__, exc)
            return kind()

    def _cached(self, project_id: int) -> Both:
        now = time.monotonic()
        known = _cache.setdefault(self.engine, {})
        found = known.get(project_id)
        if found is None or now - found[0] > CACHE_S:
            found = known[project_id] = (now, self.read(project_id))
        return found[1]

    def set_filters(self, project_id: int, filters: FilterOptions, by: str = "") -> None:
        """Store the project's filters (ValueError with a sentence when out of bounds)."""
        self._save(project_id, {"filters": encoded(filters.checked())}, by)

    def set_scrubbing(self, project_id: int, options: ScrubbingSettings, by: str = "") -> None:
        """Store the project's scrubbing options (ValueError with a sentence when out of bounds)."""
        self._save(project_id, {"scrubbing": encoded(checked_scrubbing(options))}, by)

    def set_quotas(self, project_id: int, quotas: QuotaOptions, by: str = "") -> None:
        """Store the project's quotas (ValueError with a sentence when out of bounds)."""
        self._save(project_id, {"quotas": encoded(quotas.checked())}, by)

    def set_sourcemaps(self, project_id: int, options: SourceMapOptions, by: str = "") -> None:
        """Store the project's source-map options, each origin in its one spelling (ValueError with
        a sentence when one is no origin, not on loopback, or there are too many)."""
        self._save(project_id, {"sourcemaps": encoded(checked_sourcemaps(options))}, by)

    def _save(self, project_id: int, part: dict[str, str], by: str) -> None:
        values: dict[str, Any] = {**part, "updated_at": time.time(), "updated_by": by[:200]}
        with self.engine.begin() as connection:
            dialect = sqlite if connection.dialect.name == "sqlite" else postgresql
            defaults = {"filters": encoded(FilterOptions()), "scrubbing": encoded(ScrubbingSettings()),
                        "quotas": encoded(QuotaOptions()), "sourcemaps": encoded(SourceMapOptions())}
            if connection.execute(select(PROJECTS.c.id).where(PROJECTS.c.id == project_id)).first() is None:
                raise ValueError(f"There is no project {project_id}.")  # SQLite enforces no foreign key
            statement = dialect.insert(TABLE).values(project_id=project_id, **{**defaults, **values})
            connection.execute(statement.on_conflict_do_update(index_elements=[TABLE.c.project_id], set_=values))
        for cache in (_cache, _maps_cache):  # this process sees the change at once
            cache.get(self.engine, {}).pop(project_id, None)
