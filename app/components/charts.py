"""Charts the console draws with Reflex's recharts components (SVG: labels are text, never HTML), and
the switch that picks a chart's period."""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx
from reflex.components.component import Component
from reflex.event import EventSpec
from reflex.utils.imports import ParsedImportDict


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


class BarChart(rx.recharts.BarChart):  # (named as Recharts' is: Reflex checks a chart's parts by class name)
    """Recharts' bar chart imported with its page, as the page's other recharts parts (axes, bars, the
    responsive container) are, instead of on the client only (Reflex's charts: `import('recharts')`
    in each page that has one). With that lazy import in a second page (/issue has the first), Vite 8
    puts its preload helper, and modules the pages share, in a chunk it writes without a source map:
    the plugin's build step then gives that chunk an empty map (build_step.py), and its frames would
    not be mapped. Imported statically, every chunk of Lookout's build keeps a real map. The page's
    prerender would draw it too: a page shows it only once its state is read (/releases does: its
    chart is shown when the URL names a release that sessions or events name)."""

    def _get_imports(self) -> ParsedImportDict:
        return Component._get_imports(self)

    def _get_dynamic_imports(self) -> None:  # none: imported statically
        return None


def stacked_bar_chart(data: rx.Var, label_key: str, stacks: list[tuple[str, str]], element_id: str,
                      height: int = 200) -> rx.Component:
    """A bar per row of `data` over its `label_key`, made of one segment per (key, color) of `stacks`,
    bottom first, each named by its key in the tooltip and the legend; whole numbers on the axis."""
    return rx.box(
        BarChart.create(
            rx.recharts.cartesian_grid(vertical=False, stroke_dasharray="3 3"),
            rx.recharts.x_axis(data_key=label_key, interval="preserveStartEnd", tick_line=False, min_tick_gap=16),
            rx.recharts.y_axis(allow_decimals=False, width=40, tick_line=False),
            rx.recharts.graphing_tooltip(cursor=False),
            rx.recharts.legend(),
            *[rx.recharts.bar(data_key=key, name=key, stack_id="stacked", fill=color, is_animation_active=False)
              for key, color in stacks],
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
