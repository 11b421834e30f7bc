"""Charts the console draws with Reflex's recharts components (SVG: labels are text, never HTML), and
the switch that picks a chart's period."""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx
from reflex.event import EventSpec


def counts_bar_chart(data: rx.Var, label_key: str, count_key: str, element_id: str, height: int = 160) -> rx.Component:
    """A bar per row of `data`: its `count_key` over its `label_key`, whole numbers on the axis."""
    return rx.box(
        rx.recharts.bar_chart(
            rx.recharts.cartesian_grid(vertical=False, stroke_dasharray="3 3"),
            rx.recharts.x_axis(data_key=label_key, interval="preserveStartEnd", tick_line=False, min_tick_gap=16),
            rx.recharts.y_axis(allow_decimals=False, width=40, tick_line=False),
            rx.recharts.graphing_tooltip(cursor=False),
            rx.recharts.bar(data_key=count_key, name=count_key, fill="var(--accent-9)", is_animation_active=False),
            data=data, width="100%", height=height, bar_category_gap="15%",
        ),
        id=element_id, width="100%",
    )


def period_switch(periods: list[tuple[str, str]], current: rx.Var[str], pick: Callable[[str], EventSpec],
                  element_id: str) -> rx.Component:
    """One button per (period, label), the current one solid; each button's id is `element_id`-period."""
    return rx.hstack(
        *[rx.button(label, on_click=pick(period), size="1", id=f"{element_id}-{period}",
                    variant=rx.cond(current == period, "solid", "outline")) for period, label in periods],
        spacing="1", id=element_id,
    )
