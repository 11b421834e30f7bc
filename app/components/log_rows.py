"""A log line's table row (fields from app/presentation/log_lines.py), on /logs and on a trace's page."""

from __future__ import annotations

import reflex as rx


def log_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row["when"], white_space="nowrap"),
        rx.table.cell(rx.badge(row["level"])),
        rx.table.cell(rx.text(row["body"], class_name="log-body"),
                      rx.text(row["attributes"], size="1", color_scheme="gray")),
        rx.table.cell(rx.hstack(
            rx.cond(row["trace"] != "", rx.link("trace", href=row["trace"], class_name="log-trace-link")),
            rx.cond(row["issue"] != "", rx.link("error", href=row["issue"], class_name="log-issue-link")),
            spacing="2",
        )),
        class_name="log-row",
    )
