"""Key–value displays the console shares, each drawn from flat rows (one `rx.foreach` item each, every
string a text child, never HTML):

- `context_tables`: labelled tables of keys and values (rows of app/presentation/contexts.py);
- `distribution`: a tag's values with a bar each, as wide as its share (rows with `kind` "key",
  "value" or "other", and `key`, `value`, `count`, `share`, `width`).
"""

from __future__ import annotations

import reflex as rx

from app.presentation.words import count_of


def context_tables(rows: rx.Var, element_id: str) -> rx.Component:
    return rx.table.root(rx.table.body(rx.foreach(rows, _context_row)), size="1", width="100%", id=element_id)


def _context_row(row: rx.Var) -> rx.Component:
    return rx.match(
        row.kind,
        ("table", rx.table.row(rx.table.column_header_cell(
            rx.text(row.table, size="2", weight="bold"), col_span=2, padding_top="1em", class_name="context-table"))),
        ("more", rx.table.row(rx.table.cell(rx.text(row.value, size="1", color_scheme="gray"), col_span=2,
                                            class_name="context-more"))),
        rx.table.row(
            rx.table.row_header_cell(rx.text(row.key, size="1", color_scheme="gray"), width="30%", class_name="context-key"),
            rx.table.cell(rx.text(row.value, size="1", font_family="var(--code-font-family)"), word_break="break-all",
                          class_name="context-value"),
        ),
    )


def distribution(rows: rx.Var, element_id: str) -> rx.Component:
    return rx.vstack(rx.foreach(rows, _distribution_row), spacing="1", width="100%", id=element_id)


def _distribution_row(row: rx.Var) -> rx.Component:
    return rx.cond(
        row.kind == "key",
        rx.hstack(
            rx.text(row.key, size="2", weight="bold"), rx.text(count_of(row.count, "event"), size="1", color_scheme="gray"),
            align="baseline", spacing="2", margin_top="0.75em", class_name="tag-key",
        ),
        rx.box(
            rx.hstack(
                rx.text(row.value, size="1", overflow="hidden", text_overflow="ellipsis", white_space="nowrap",
                        color=rx.cond(row.kind == "other", "var(--gray-10)", "var(--gray-12)"), class_name="tag-value"),
                rx.spacer(),
                rx.text(row.share, size="1", color_scheme="gray", white_space="nowrap", class_name="tag-share"),
                rx.text(row.count, size="1", color_scheme="gray", min_width="3em", text_align="right"),
                width="100%", spacing="2",
            ),
            rx.box(
                rx.box(width=row.width, height="100%", border_radius="inherit",
                       background=rx.cond(row.kind == "other", "var(--gray-8)", "var(--accent-9)")),
                width="100%", height="4px", border_radius="2px", background="var(--gray-a3)",
            ),
            width="100%", class_name="tag-distribution",
        ),
    )
