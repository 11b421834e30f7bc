"""The /tokens page's "API tokens" section: a signed-in console user makes API tokens for
themself (app/webapi/tokens.py), with the scopes their role allows, sees each secret once
(app/console/form_state.py), and lists and revokes their own; a maintainer, and this machine (which
the CLI runs on anyway), list and revoke anyone's. A client with no console user (this machine not
signed in) makes none: a sentence says how to get one.

Every handler is a public endpoint (app/console/state.py): it finds the client's console user anew
(`_who()`: the session of the page's own cookie, with the role the user has now), takes each argument
as possibly anything (a scope among the role's, a bool, bounded text, a whole number), and answers a
refusal with a sentence in `error`."""

from __future__ import annotations

import dataclasses
import time

import anyio.to_thread
import reflex as rx

from app import routes
from app.console import access, state as console
from app.console.accounts import Viewer, cookie_token
from app.console.form_state import FormState, is_row_id
from app.console.state import ago, bounded, database
from app.protocol.bearer import MAX_LABEL_CHARS, day
from app.webapi.scopes import allowed_scopes, ordered
from app.webapi.tokens import ApiTokenRow, ApiTokens

NOT_SIGNED_IN = ("API tokens belong to a console user, whom they act as: sign in as that user to make one here, "
                 "or make one on this machine with `python -m app.inbox.tokens api NAME`.")
NO_TOKEN = "There is no such API token of yours."


@dataclasses.dataclass(frozen=True)
class ApiTokenView:
    """One API token as the page shows it (its first 8 characters only); Revoke is offered while it
    is not revoked."""

    id: int
    user: str
    scopes: str  # space-separated, in Sentry's order
    label: str
    prefix: str  # the first 8 characters and "…"
    created: str
    last_used: str  # "never", or how long ago
    revoked: bool
    revoked_on: str  # the day revoked ("" while not revoked)


def token_view(token: ApiTokenRow, now: float) -> ApiTokenView:
    return ApiTokenView(
        id=token.id, user=token.user_name, scopes=" ".join(token.scopes), label=token.label, prefix=token.prefix + "…",
        created=day(token.created_at), last_used="never" if token.last_used_at is None else ago(token.last_used_at, now),
        revoked=token.revoked_at is not None, revoked_on="" if token.revoked_at is None else day(token.revoked_at),
    )


def api_tokens() -> ApiTokens:
    """The API tokens as the console reads them (the users of LOOKOUT_CONSOLE_USERS have tokens too)."""
    return ApiTokens(database(), console.accounts().from_env)


class ApiTokensState(FormState, rx.State):
    secret_route = routes.TOKENS
    api_tokens: list[ApiTokenView] = []
    owner: str = ""  # the signed-in console user, whom a new token acts as ("" for none)
    sees_all: bool = False  # a maintainer or this machine: every user's tokens are listed
    scope_choices: list[str] = []  # the scopes the owner's role allows
    left_out: list[str] = []  # of those, the ones unticked for the next token (default: none)
    api_label: str = ""

    def _who(self) -> tuple[Viewer | None, bool] | None:
        """The client's console user (None when none is signed in) and whether it sees every user's
        tokens; None for a client that may not see the console."""
        if not self._admit():
            return None
        token = cookie_token(self.router.headers.cookie)
        user = console.accounts().session(token) if token else None
        if user is not None:
            return user, user.may_change
        return None, access.this_machine(access.Caller.from_router(self.router))

    def _may_hold(self) -> bool:
        who = self._who()
        return who is not None and who[0] is not None and who[0].name == self.owner

    async def _read(self) -> None:
        user, sees_all = self._who() or (None, False)
        self.read, self.may_change, self.sees_all = True, user is not None or sees_all, sees_all
        self.owner = "" if user is None else user.name
        self.scope_choices = [] if user is None else list(ordered(allowed_scopes(user.role)))
        mine = None if sees_all or user is None else user.name
        if user is None and not sees_all:
            self.api_tokens = []
            return
        now = time.time()
        rows = await anyio.to_thread.run_sync(lambda: api_tokens().list(mine))
        self.api_tokens = [token_view(row, now) for row in reversed(rows)]  # newest first

    def _begin(self) -> tuple[Viewer | None, bool] | None:
        """Start a change: the last change's messages go; who the client is (as `_who`)."""
        self._forget()
        return self._who()

    @rx.event
    def toggle_scope(self, scope: str, ticked: bool) -> None:
        who = self._who()
        if who is None or who[0] is None or not isinstance(ticked, bool):
            return
        if isinstance(scope, str) and scope in allowed_scopes(who[0].role):
            self.left_out = [s for s in self.left_out if s != scope] + ([] if ticked else [scope])

    @rx.event
    def set_api_label(self, text: str) -> None:
        who = self._who()
        if who is not None and who[0] is not None:
            self.api_label = bounded(text, MAX_LABEL_CHARS + 1)  # one character more: too long is refused, not cut

    @rx.event
    async def create_api_token(self):  # noqa: ANN201 (hold_secret, when a token was made)
        who = self._begin()
        if who is not None and who[0] is None:
            self.error = NOT_SIGNED_IN
        elif who is not None and who[0] is not None:
            user = who[0]
            scopes = [s for s in ordered(allowed_scopes(user.role)) if s not in self.left_out]
            label = self.api_label
            made = await self._change(lambda: api_tokens().add(user.name, scopes, label, created_by=user.name))
            if made is not None:
                row, secret = made
                self.api_label, self.left_out = "", []
                self._show_secret(secret)
                self.notice = (f"API token {row.id} made for {row.user_name} ({' '.join(row.scopes)}): copy it now, "
                               "it is shown only once.")
        await self._show()
        return type(self).hold_secret if self.secret_once else None

    @rx.event
    async def revoke_api_token(self, token_id: int) -> None:
        who = self._begin()
        if who is not None and who[0] is None and not who[1]:
            self.error = NOT_SIGNED_IN
        elif who is not None:
            user, sees_all = who
            by_user = None if sees_all or user is None else user.name
            if is_row_id(token_id) and await self._change(lambda: api_tokens().revoke(token_id, by_user)):
                self.notice = f"API token {token_id} is revoked: requests with it are refused."
            elif not self.error:
                self.error = NO_TOKEN
        await self._show()
