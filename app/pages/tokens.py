"""`/tokens`: the upload tokens sentry-cli and the bundler plugins send source maps with
(app/sourcemaps/tokens.py), then the API tokens of console users for Lookout's web API (tokens_api.py).

Maintainers make a token for a project, with a label; its secret and the settings that go with it
are shown once, then only its first 8 characters. They revoke tokens; viewers see the list
read-only (the state, and who may do what: tokens_state.py). The page is live: "last used" follows
the uploads. Every string from outside (labels, project names) is rendered as text."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.components.forms import native_select, outcome, read_only, rows_table, token_row
from app.components.page import page_at
from app.pages import tokens_api
from app.pages.tokens_api_state import ApiTokensState
from app.pages.tokens_state import TokensState, UploadTokenRow

TITLE = "Tokens · Lookout"
ON_LOAD = [TokensState.load, ApiTokensState.load]
HEADERS = ["Label", "Project", "Token", "Created", "Created by", "Last used", "Revoked"]


def token_row_view(row: rx.Var[UploadTokenRow]) -> rx.Component:
    return token_row(TokensState, row, [row.label, row.project, rx.code(row.prefix), row.created, row.created_by],
                     TokensState.revoke(row.id), "token", "upload-token")


def tokens_table() -> rx.Component:
    return rows_table(TokensState, HEADERS, TokensState.tokens, token_row_view, "upload-tokens")


def create_form() -> rx.Component:
    return rx.hstack(
        native_select(TokensState.projects, TokensState.project, TokensState.set_project, "token-project"),
        rx.input(value=TokensState.label, on_change=TokensState.set_label, id="token-label", width="20em",
                 placeholder="label, e.g. billing-web CI"),
        rx.button("Make a token", on_click=TokensState.create, id="token-create"),
        align="center", spacing="2", wrap="wrap",
    )


def secret_once() -> rx.Component:
    return rx.callout.root(
        rx.vstack(
            rx.text("Copy this token now: it is shown only once (Lookout keeps its hash). ",
                    rx.code(TokensState.secret_once, id="token-secret-once")),
            rx.text("For sentry-cli, as environment variables (@sentry/vite-plugin reads them too):", size="2"),
            rx.el.pre(TokensState.settings_once, id="token-settings-once",
                      style={"margin": "0", "white_space": "pre-wrap", "word_break": "break-all"}),
            rx.text("then: sentry-cli sourcemaps inject dist && sentry-cli sourcemaps upload dist", size="2"),
            rx.button("I have copied it", on_click=TokensState.forget_secret, size="1", variant="soft",
                      id="token-forget"),
            spacing="2",
        ),
        color_scheme="amber", id="token-once",
    )


@page_at(routes.TOKENS, TITLE, on_load=ON_LOAD, state=TokensState, heading="Upload tokens")
def page() -> rx.Component:
    return rx.vstack(
        rx.text("Tokens let sentry-cli and the bundler plugins upload a project's source maps, and "
                "nothing else.", size="2"),
        read_only(TokensState, "You can see the tokens; only a maintainer can make or revoke them.",
                  "tokens-readonly"),
        outcome(TokensState, "tokens-error", "tokens-notice"),
        rx.cond(TokensState.secret_once != "", secret_once()),
        rx.cond(TokensState.may_change, create_form()),
        tokens_table(),
        rx.cond(TokensState.read & (TokensState.tokens.length() == 0),
                rx.text("No upload token yet.", size="2", id="tokens-none")),
        rx.divider(),
        tokens_api.section(),
        width="100%", spacing="3",
    )
