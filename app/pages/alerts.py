"""`/alerts`: where alerts go (channels) and when they fire (each project's rules).

Maintainers add a channel (an e-mail address, or a slack, discord or json webhook, for every
project or one), remove one, switch one on or off, send it a test alert, and edit each project's
rules; viewers see the same page read-only (the state, and who may do what: alerts_state.py).
Channels show masked (app/alerts/configure.py). The page is live: each channel's last delivery
and last error show up as the sender records them. Every string from outside (targets, project
names, errors) is rendered as text."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.alerts.alert import KINDS
from app.components.forms import native_select, outcome, read_only, rows_table
from app.components.page import page_at
from app.pages.alerts_state import AlertsState, ChannelRow
from app.presentation.words import count_of, noun_of

TITLE = "Alerts · Lookout"


def channel_actions(row: rx.Var[ChannelRow]) -> rx.Component:
    """A maintainer's controls for one channel (an environment channel cannot be removed here)."""
    shown_id = row.id.to_string()
    return rx.hstack(
        rx.switch(checked=row.enabled, id="channel-toggle-" + shown_id,
                  on_change=lambda on: AlertsState.toggle_channel(row.id, on)),
        rx.button("Send a test alert", on_click=AlertsState.send_test(row.id), size="1", variant="soft",
                  id="channel-test-" + shown_id),
        rx.cond(~row.from_environment, rx.button(
            "Remove", on_click=AlertsState.remove_channel(row.id), size="1", color_scheme="red",
            variant="soft", id="channel-remove-" + shown_id)),
        align="center", spacing="2",
    )


def channel_row_view(row: rx.Var[ChannelRow]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row.kind),
        rx.table.cell(rx.text(row.target, class_name="channel-target"),
                      rx.cond(row.secret != "", rx.text("secret: ", row.secret, size="1", color_scheme="gray"))),
        rx.table.cell(row.project),
        rx.table.cell(rx.cond(row.from_environment, "environment", "console")),
        rx.table.cell(rx.cond(row.enabled, "on", "off"), class_name="channel-enabled"),
        rx.table.cell(row.last_delivery, class_name="channel-last-delivery"),
        rx.table.cell(rx.cond(row.last_error != "", rx.vstack(
            rx.text(row.last_error, size="1", color_scheme="red", class_name="channel-last-error"),
            rx.text(row.last_error_when, size="1", color_scheme="gray"), spacing="0",
        ))),
        rx.cond(AlertsState.may_change, rx.table.cell(channel_actions(row))),
        id="alert-channel-" + row.id.to_string(), class_name="alert-channel",
    )


def channels_table() -> rx.Component:
    headers = ["Kind", "Target", "Project", "Origin", "On", "Last delivery", "Last error"]
    return rows_table(AlertsState, headers, AlertsState.channels, channel_row_view, "alerts-channels")


def add_channel_form() -> rx.Component:
    return rx.hstack(
        native_select(list(KINDS), AlertsState.kind, AlertsState.set_kind, "channel-kind"),
        rx.input(value=AlertsState.target, on_change=AlertsState.set_target, id="channel-target", width="24em",
                 placeholder=rx.cond(AlertsState.kind == "email", "ops@example.com", "https://…")),
        rx.cond(AlertsState.kind == "json", rx.input(
            value=AlertsState.secret, on_change=AlertsState.set_secret, id="channel-secret", type="password",
            placeholder="secret (empty: one is made)", width="14em")),
        native_select(AlertsState.scopes, AlertsState.channel_project, AlertsState.set_channel_project,
                      "channel-project"),
        rx.button("Add", on_click=AlertsState.add_channel, id="channel-add"),
        align="center", spacing="2", wrap="wrap",
    )


def rules_form() -> rx.Component:
    def switch(name: str, label: str) -> rx.Component:
        return rx.hstack(
            rx.switch(checked=getattr(AlertsState, name), on_change=lambda on: AlertsState.set_rule(name, on),
                      id=f"rule-{name.replace('_', '-')}"),
            rx.text(label, size="2"), align="center", spacing="2",
        )

    def number(name: str, label: str) -> rx.Component:
        return rx.hstack(
            rx.text(label, size="2"),
            rx.input(value=getattr(AlertsState, name), on_change=lambda text: AlertsState.set_rule_number(name, text),
                     id=f"rule-{name.replace('_', '-')}", type="number", width="7em"),
            align="center", spacing="2",
        )

    return rx.vstack(
        switch("new_issue", "A new issue"), switch("regression", "A regression"),
        switch("spike", "A spike:"),
        rx.hstack(number("spike_events", "more than"), number("spike_minutes", "events of one issue within (minutes)"),
                  spacing="3", wrap="wrap"),
        number("quiet_minutes", "An issue alerts at most once per rule in (minutes)"),
        rx.button("Save the rules", on_click=AlertsState.save_rules, id="rules-save"),
        spacing="2",
    )


def rules_text() -> rx.Component:
    def on_off(flag: rx.Var[bool]) -> rx.Component:
        return rx.cond(flag, "on", "off")

    return rx.data_list.root(
        rx.data_list.item(rx.data_list.label("A new issue"), rx.data_list.value(on_off(AlertsState.new_issue))),
        rx.data_list.item(rx.data_list.label("A regression"), rx.data_list.value(on_off(AlertsState.regression))),
        rx.data_list.item(rx.data_list.label("A spike"), rx.data_list.value(rx.text(
            on_off(AlertsState.spike), ": more than ", AlertsState.spike_events, " ",
            noun_of(AlertsState.spike_events, "event"), " of one issue within ", count_of(AlertsState.spike_minutes, "minute")))),
        rx.data_list.item(rx.data_list.label("Quiet period"),
                          rx.data_list.value(rx.text(count_of(AlertsState.quiet_minutes, "minute")))),
        id="rules-text",
    )


@page_at(routes.ALERTS, TITLE, on_load=AlertsState.load, state=AlertsState, heading="Alerts")
def page() -> rx.Component:
    return rx.vstack(
        read_only(AlertsState, "You can see the alerts; only a maintainer can change them.", "alerts-readonly"),
        outcome(AlertsState, "channel-error", "alerts-notice"),
        rx.cond(AlertsState.secret_once != "", rx.callout.root(rx.callout.text(
            "This channel's secret signs each request (X-Lookout-Signature); it is shown only now: ",
            rx.code(AlertsState.secret_once, id="channel-secret-once"),
        ), color_scheme="amber")),
        rx.heading("Channels", size="4"),
        rx.cond(AlertsState.may_change, add_channel_form()),
        channels_table(),
        rx.cond(AlertsState.channels.length() == 0, rx.text("No channel yet: alerts go nowhere.", size="2")),
        rx.heading("Rules", size="4"),
        rx.cond(AlertsState.projects.length() > 0, rx.vstack(
            native_select(AlertsState.projects, AlertsState.rules_project, AlertsState.choose_rules_project,
                          "rules-project"),
            rx.cond(AlertsState.may_change, rules_form(), rules_text()),
            spacing="3",
        )),
        width="100%", spacing="3",
    )
