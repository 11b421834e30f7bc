"""Form pieces the console pages share: a plain select, the callouts that say what the last change
did, and the read-only notice a viewer sees (the state's side: app/console/form_state.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from app.console.form_state import FormState


def native_select(choices: list[str] | rx.Var[list[str]], value: rx.Var[str], on_change: rx.EventHandler,
                  element_id: str) -> rx.Component:
    """A plain <select>: scripts and tests pick its options by value (`select_option`)."""
    return rx.el.select(
        rx.foreach(choices, lambda choice: rx.el.option(choice, value=choice)),
        value=value, on_change=on_change, id=element_id,
        style={"padding": "0.3em 0.5em", "border": "1px solid var(--gray-a7)", "border_radius": "var(--radius-2)",
               "background": "var(--color-surface)", "color": "var(--gray-12)"},
    )


def read_only(state: type[FormState], sentence: str, element_id: str) -> rx.Component:
    """What a viewer (allowed to see the page, not to change it) is told."""
    return rx.cond(state.read & ~state.may_change, rx.callout(sentence, id=element_id))


def outcome(state: type[FormState], error_id: str, notice_id: str) -> rx.Component:
    """The last change's refusal (orange) or notice (green), each shown when there is one."""
    return rx.fragment(
        rx.cond(state.error != "", rx.callout(state.error, color_scheme="orange", id=error_id)),
        rx.cond(state.notice != "", rx.callout(state.notice, color_scheme="green", id=notice_id)),
    )


def rows_table(state: type[FormState], headers: list[str], rows: rx.Var, row_view: Callable[[Any], rx.Component],
               element_id: str) -> rx.Component:
    """A table of `rows` shown by `row_view`, with one more column (the row's actions) for a client
    that may change them."""
    return rx.table.root(
        rx.table.header(rx.table.row(*[rx.table.column_header_cell(h) for h in headers],
                                     rx.cond(state.may_change, rx.table.column_header_cell("")))),
        rx.table.body(rx.foreach(rows, row_view)),
        width="100%", id=element_id,
    )
