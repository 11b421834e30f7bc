"""Form pieces the console pages share: a plain select drawn like the Radix controls, the callouts
that say what the last change did, the read-only notice a viewer sees, and tables of rows (a token's
with its Revoke) (the state's side: app/console/form_state.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import reflex as rx

from app.console.form_state import FormState


def select_style(size: Literal["1", "2"] = "2") -> dict[str, Any]:
    """A native <select> drawn like Radix Themes' "surface" controls of `size` "1" or "2" (rx.input,
    rx.button, rx.select's trigger): their height, type, radius, hairline border and focus ring, so
    it sits beside them as one of theirs. Every select of the console is drawn so."""
    n = int(size)
    return {
        "height": f"var(--space-{4 + n})", "padding": f"0 var(--space-{n}) 0 var(--space-{1 + n})",
        "font_size": f"var(--font-size-{n})",
        "line_height": f"var(--line-height-{n})", "letter_spacing": f"var(--letter-spacing-{n})",
        "color": "var(--gray-12)", "background_color": "var(--color-surface)", "border": "none",
        "box_shadow": "inset 0 0 0 1px var(--gray-a7)", "border_radius": f"max(var(--radius-{n}), var(--radius-full))",
        "cursor": "pointer",
        "_hover": {"box_shadow": "inset 0 0 0 1px var(--gray-a8)"},
        "_focus_visible": {"outline": "2px solid var(--focus-8)", "outline_offset": "-1px"},
    }


def native_select(choices: list[str] | rx.Var[list[str]], value: rx.Var[str], on_change: rx.EventHandler,
                  element_id: str) -> rx.Component:
    """A plain <select>, styled like the Radix controls: scripts and tests pick its options by value
    (`select_option`), and its change event gives the value. Named like its id: inside an `rx.form`
    its value is submitted under that key (Reflex 0.11 submits only named controls)."""
    return rx.el.select(
        rx.foreach(choices, lambda choice: rx.el.option(choice, value=choice)),
        value=value, on_change=on_change, id=element_id, name=element_id, style=select_style(),
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


def token_row(state: type[FormState], row: rx.Var, cells: list[Any], on_revoke: Any, prefix: str,
              name: str) -> rx.Component:
    """A token's row (id `<name>-<id>`, class `name`): `cells`, then when it was last used and revoked
    (classes `<prefix>-last-used`, `<prefix>-revoked`), then, for a client that may change, Revoke
    (`<prefix>-revoke-<id>`) while it is not revoked. `row` has `id`, `last_used`, `revoked`, `revoked_on`."""
    shown_id = row.id.to_string()
    return rx.table.row(
        *[rx.table.cell(cell) for cell in cells],
        rx.table.cell(row.last_used, class_name=f"{prefix}-last-used"),
        rx.table.cell(row.revoked_on, class_name=f"{prefix}-revoked"),
        rx.cond(state.may_change, rx.table.cell(rx.cond(~row.revoked, rx.button(
            "Revoke", on_click=on_revoke, size="1", color_scheme="red", variant="soft", id=f"{prefix}-revoke-" + shown_id)))),
        id=f"{name}-" + shown_id, class_name=name,
    )
