"""`/settings`: a project's inbound filters (what ingest drops before storing anything, and how many
each dropped), its PII scrubbing options, its quotas and the dev servers its browser frames may be
mapped with.

Maintainers change them; viewers see the same page with every control disabled; a client that may
not see the console is refused (the state, and who may do what: project_settings_state.py). Every string
from outside (project names, globs, field names) is rendered as text."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.components.forms import native_select, outcome, read_only
from app.components.page import page_at
from app.pages.project_settings_state import OPTIONS, ProjectOptionsState
from app.projects.filter_options import LABELS, LISTS, MAX_ENTRIES, MAX_ENTRY_CHARS, SWITCHES
from app.projects.options_store import MAX_FIELD_CHARS, MAX_FIELDS
from app.projects.quota_options import LABELS as QUOTA_LABELS, MAXIMA
from app.projects.sourcemap_options import MAX_DEV_SERVERS, MAX_ORIGIN_CHARS

TITLE = "Settings · Lookout"
OPTION_LABELS = {
    "scrub_data": "Scrub data: remove what looks like personal data before it is stored",
    "scrub_defaults": "The default fields (password, secret, token, auth, …), card numbers, IBANs, PEM keys, URL passwords",
    "scrub_ip_addresses": "IP addresses",
}
LIST_HINTS = {
    "error_messages": "Error messages to drop: globs of \"Type: value\" or the message, one a line (* any text, ? one character)",
    "releases": "Releases to drop: globs, one a line",
    "client_ips": "Client IP addresses to drop (the event's user.ip_address): addresses or CIDR ranges, one a line",
    "sensitive_fields": "More fields to scrub: names, one a line",
    "safe_fields": "Fields never scrubbed: names, one a line",
    "dev_servers": "Dev servers (origins such as http://127.0.0.1:3000, one a line): a browser frame on one of "
                   "them is mapped with the inline source map of the module Lookout reads from there. "
                   "Lookout reads from no other address an event names.",
}


def dashed(name: str) -> str:
    return name.replace("_", "-")


def dropped(name: str) -> rx.Component:
    return rx.text(ProjectOptionsState.dropped[name].to_string(), " dropped", size="1", color_scheme="gray",
                   id=f"filter-dropped-{dashed(name)}")


def switch(checked: rx.Var[bool], on_change: rx.EventHandler, label: str, element_id: str) -> rx.Component:
    return rx.checkbox(label, checked=checked, on_change=on_change, disabled=~ProjectOptionsState.may_change, id=element_id)


def text_list(name: str, bound: str) -> rx.Component:
    return rx.vstack(
        rx.text(LIST_HINTS[name], size="2"),
        rx.text_area(value=getattr(ProjectOptionsState, name), on_change=lambda text: ProjectOptionsState.set_text(name, text),
                     read_only=~ProjectOptionsState.may_change, id=f"settings-{dashed(name)}", rows="3", width="100%"),
        rx.text(bound, size="1", color_scheme="gray"),
        spacing="1", width="100%",
    )


def filters_form() -> rx.Component:
    bound = f"At most {MAX_ENTRIES} lines of {MAX_ENTRY_CHARS} characters."
    return rx.vstack(
        *[rx.hstack(switch(ProjectOptionsState.filters[name], lambda on, name=name: ProjectOptionsState.set_filter(name, on),
                           LABELS[name], f"filter-{dashed(name)}"), dropped(name), align="center", spacing="3")
          for name in LABELS if name in SWITCHES],
        *[rx.vstack(text_list(name, bound), dropped(name), spacing="1", width="100%") for name in LISTS],
        rx.cond(ProjectOptionsState.may_change,
                rx.button("Save the filters", on_click=ProjectOptionsState.save_filters, id="filters-save")),
        spacing="3", width="100%",
    )


def scrubbing_form() -> rx.Component:
    bound = f"At most {MAX_FIELDS} lines of {MAX_FIELD_CHARS} characters."
    return rx.vstack(
        *[switch(ProjectOptionsState.options[name], lambda on, name=name: ProjectOptionsState.set_option(name, on),
                 OPTION_LABELS[name], f"scrub-{dashed(name)}") for name in OPTIONS],
        text_list("sensitive_fields", bound), text_list("safe_fields", bound),
        rx.cond(ProjectOptionsState.may_change,
                rx.button("Save the scrubbing options", on_click=ProjectOptionsState.save_scrubbing, id="scrubbing-save")),
        spacing="3", width="100%",
    )


def quotas_form() -> rx.Component:
    return rx.vstack(
        rx.text("Error events the project may send (errors, messages, security reports; not transactions or "
                "logs). Past a quota its SDKs are answered 429 with Retry-After and wait for the minute or "
                "hour to end. 0: no limit.", size="2"),
        *[rx.hstack(
            rx.text(QUOTA_LABELS[name], size="2", width="10em"),
            rx.input(value=getattr(ProjectOptionsState, name),
                     on_change=lambda text, name=name: ProjectOptionsState.set_text(name, text),
                     read_only=~ProjectOptionsState.may_change, id=f"quota-{dashed(name)}", input_mode="numeric", width="12em"),
            rx.text(f"0 to {MAXIMA[name]:,}", size="1", color_scheme="gray"),
            align="center", spacing="3",
        ) for name in QUOTA_LABELS],
        rx.cond(ProjectOptionsState.may_change,
                rx.button("Save the quotas", on_click=ProjectOptionsState.save_quotas, id="quotas-save")),
        spacing="3", width="100%",
    )


def sourcemaps_form() -> rx.Component:
    return rx.vstack(
        text_list("dev_servers", f"At most {MAX_DEV_SERVERS} lines of {MAX_ORIGIN_CHARS} characters."),
        rx.cond(ProjectOptionsState.may_change,
                rx.button("Save the dev servers", on_click=ProjectOptionsState.save_sourcemaps, id="sourcemaps-save")),
        spacing="3", width="100%",
    )


@page_at(routes.SETTINGS, TITLE, on_load=ProjectOptionsState.load, state=ProjectOptionsState, heading="Settings")
def page() -> rx.Component:
    return rx.vstack(
        read_only(ProjectOptionsState, "You can see the projects' settings; only a maintainer can change them.",
                  "settings-readonly"),
        outcome(ProjectOptionsState, "settings-error", "settings-notice"),
        rx.cond(ProjectOptionsState.projects.length() > 0, rx.vstack(
            native_select(ProjectOptionsState.projects, ProjectOptionsState.project, ProjectOptionsState.choose_project,
                          "settings-project"),
            rx.heading("Inbound filters", size="4"),
            rx.text("What they match is dropped at ingest, before anything of it is stored, and counted.",
                    size="2"),
            filters_form(),
            rx.heading("Data scrubbing", size="4"),
            scrubbing_form(),
            rx.heading("Quotas", size="4"),
            quotas_form(),
            rx.heading("Source maps", size="4"),
            sourcemaps_form(),
            spacing="3", width="100%",
        )),
        width="100%", spacing="3",
    )
