"""The /tokens page's "API tokens" section (its state: tokens_api_state.py): the signed-in user's
form (scopes ticked within their role, a label), the new secret once, and the tokens listed with
Revoke. Every string from outside (labels, user names) is rendered as text."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.components.forms import outcome, rows_table, token_row
from app.pages.tokens_api_state import NOT_SIGNED_IN, ApiTokensState, ApiTokenView

HEADERS = ["User", "Scopes", "Label", "Token", "Created", "Last used", "Revoked"]


def token_row_view(row: rx.Var[ApiTokenView]) -> rx.Component:
    return token_row(ApiTokensState, row, [row.user, row.scopes, row.label, rx.code(row.prefix), row.created],
                     ApiTokensState.revoke_api_token(row.id), "api-token", "api-token")


def scope_box(scope: rx.Var[str]) -> rx.Component:
    return rx.checkbox(scope, checked=~ApiTokensState.left_out.contains(scope),
                       on_change=lambda ticked: ApiTokensState.toggle_scope(scope, ticked), id="api-scope-" + scope)


def create_form() -> rx.Component:
    return rx.vstack(
        rx.hstack(rx.text("Scopes:", size="2"), rx.foreach(ApiTokensState.scope_choices, scope_box),
                  spacing="3", wrap="wrap", align="center"),
        rx.hstack(
            rx.input(value=ApiTokensState.api_label, on_change=ApiTokensState.set_api_label, id="api-token-label",
                     width="20em", placeholder="label, e.g. Claude Code"),
            rx.button("Make an API token for ", ApiTokensState.owner, on_click=ApiTokensState.create_api_token,
                      id="api-token-create"),
            align="center", spacing="2", wrap="wrap",
        ),
        spacing="2",
    )


def secret_once() -> rx.Component:
    return rx.callout.root(
        rx.vstack(
            rx.text("Copy this API token now: it is shown only once (Lookout keeps its hash). ",
                    rx.code(ApiTokensState.secret_once, id="api-token-secret-once")),
            rx.text("Send it as ", rx.code("Authorization: Bearer <token>"), "; sentry-cli reads it from ",
                    rx.code("SENTRY_AUTH_TOKEN"), ", Sentry's MCP server from ", rx.code("--access-token"), ".", size="2"),
            rx.button("I have copied it", on_click=ApiTokensState.forget_secret, size="1", variant="soft",
                      id="api-token-forget"),
            spacing="2",
        ),
        color_scheme="amber", id="api-token-once",
    )


def section() -> rx.Component:
    return rx.vstack(
        rx.heading("API tokens", size="5", id="api-tokens-title"),
        rx.text("API tokens let scripts, sentry-cli and Sentry's MCP server use Lookout's web API as a console "
                "user, within Sentry's scopes (docs/api-tokens.md).", size="2"),
        rx.cond(ApiTokensState.read & (ApiTokensState.owner == ""), rx.callout(
            rx.text(NOT_SIGNED_IN, " ", rx.link("Sign in", href=routes.SIGN_IN)), id="api-tokens-no-user")),
        outcome(ApiTokensState, "api-tokens-error", "api-tokens-notice"),
        rx.cond(ApiTokensState.secret_once != "", secret_once()),
        rx.cond(ApiTokensState.owner != "", create_form()),
        rows_table(ApiTokensState, HEADERS, ApiTokensState.api_tokens, token_row_view, "api-tokens"),
        rx.cond(ApiTokensState.read & (ApiTokensState.api_tokens.length() == 0),
                rx.text("No API token yet.", size="2", id="api-tokens-none")),
        width="100%", spacing="3",
    )
