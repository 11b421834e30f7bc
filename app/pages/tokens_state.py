"""The /tokens page's state: the upload tokens and projects as an allowed client sees them, the new
token's project and label as a maintainer picks them, and the changes (app/sourcemaps/tokens.py).

Every handler is a public endpoint (app/console/state.py): it reads through `_show()`, changes
something only for `_maintainer()`, and takes each argument as possibly anything (bounded text, a
choice among the offered ones, a whole number). A refusal is a sentence in `error`.

A new token's secret is in the state only to be shown once, to the maintainer who made it
(app/console/form_state.py)."""

from __future__ import annotations

import dataclasses
import time

import anyio.to_thread
import reflex as rx

from app import routes
from app.console.form_state import FormState, choice_of, is_row_id, project_of
from app.console.state import ago, database
from app.projects.registry import Projects
from app.settings import SETTINGS
from app.sourcemaps.tokens import MAX_LABEL_CHARS, TokenRow, Tokens, day, settings_text, upload_url

MAINTAINERS_ONLY = "Only a maintainer can make or revoke upload tokens."
NO_TOKEN = "There is no such upload token."


@dataclasses.dataclass(frozen=True)
class UploadTokenRow:
    """One upload token as the page shows it (its first 8 characters only); Revoke is offered
    while it is not revoked."""

    id: int
    label: str
    project: str  # one of the page's projects, or "N · (gone)"
    prefix: str  # the first 8 characters and "…"
    created: str  # the day made
    created_by: str
    last_used: str  # "never", or how long ago
    revoked: bool
    revoked_on: str  # the day revoked ("" while not revoked)


def token_row(token: TokenRow, names: dict[int, str], now: float) -> UploadTokenRow:
    return UploadTokenRow(
        id=token.id, label=token.label,
        project=choice_of(token.project_id, names.get(token.project_id, "(gone)")),
        prefix=token.prefix + "…", created=day(token.created_at), created_by=token.created_by,
        last_used="never" if token.last_used_at is None else ago(token.last_used_at, now),
        revoked=token.revoked_at is not None,
        revoked_on="" if token.revoked_at is None else day(token.revoked_at),
    )


class TokensState(FormState, rx.State):
    live_route = secret_route = routes.TOKENS
    maintainers_only = MAINTAINERS_ONLY
    unpersisted = ("secret_once", "settings_once")  # the settings hold the secret too
    tokens: list[UploadTokenRow] = []
    # The new token, as picked and typed.
    project: str = ""
    label: str = ""
    # The settings that go with the token just made (`secret_once`), shown once (see the docstring).
    settings_once: str = ""

    async def _read(self) -> None:
        self._reading(self._viewer())
        now = time.time()

        def read() -> tuple[list[TokenRow], dict[int, str]]:
            engine = database()
            return Tokens(engine).list(), {p.id: p.name for p in Projects(engine).all()}

        tokens, names = await anyio.to_thread.run_sync(read)
        self.projects = [choice_of(project_id, name) for project_id, name in names.items()]
        self.tokens = [token_row(token, names, now) for token in reversed(tokens)]  # newest first
        if self.project not in self.projects:
            self.project = self.projects[0] if self.projects else ""

    def _drop_secret(self) -> None:
        super()._drop_secret()
        self.settings_once = ""

    @rx.event
    def set_project(self, choice: str) -> None:
        self._pick("project", choice, self.projects, self.project)

    @rx.event
    def set_label(self, text: str) -> None:
        self._type("label", text, MAX_LABEL_CHARS)

    @rx.event
    async def create(self):  # noqa: ANN201 (hold_secret, when a token was made)
        maintainer = self._begin_change()
        if maintainer is None:
            return None
        project_id, label = project_of(self.project), self.label
        if project_id is None:
            self.error = "Choose the project the token uploads to."
        else:
            made = await self._change(lambda: Tokens(database()).add(project_id, label, created_by=maintainer.name))
            if made is not None:
                row, secret = made
                self.label = ""
                self._show_secret(secret)
                self.settings_once = settings_text(row.project_id, secret, upload_url(SETTINGS.public_url))
                self.notice = f"Token {row.id} made for {self.project}: copy it now, it is shown only once."
        await self._show()
        return type(self).hold_secret if self.secret_once else None

    @rx.event
    async def revoke(self, token_id: int) -> None:
        if self._begin_change() is not None:
            if not is_row_id(token_id):
                self.error = NO_TOKEN
            elif await self._change(lambda: Tokens(database()).revoke(token_id)):
                self.notice = f"Token {token_id} is revoked: uploads with it are refused."
            elif not self.error:
                self.error = NO_TOKEN
        await self._show()
