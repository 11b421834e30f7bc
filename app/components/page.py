"""Every page of the app, declared where it is written: `@page_at(route, title, on_load=…)` adds the
page function to `PAGES` (app/app.py adds them all to the app) and, given the page's `state`, draws
the console's frame around what the function returns — the layout with its header, a way back, the
page's heading, and the content only when the client may see it (`unless_refused`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import reflex as rx

from app.components.layout import layout
from app.components.refused import unless_refused
from app.console.state import ConsoleState

Render = Callable[[], rx.Component]


@dataclass(frozen=True)
class Page:
    render: Render
    route: str
    title: str
    on_load: Any = None  # an event handler, a list of them, or None


PAGES: list[Page] = []  # in the order the page modules are imported


def page_at(route: str, title: str, *, on_load: Any = None, state: type[ConsoleState] | None = None,
            heading: str = "", heading_size: str = "7", back: tuple[str, str] | None = None) -> Callable[[Render], Render]:
    """Register the decorated page at `route`. With `state` (a console page), the function gives the
    page's content: it is drawn in the layout after `back` (href, label) and `heading`, unless
    `state` refuses the client. Without, the function draws the whole page."""

    def register(content: Render) -> Render:
        render = content
        if state is not None:
            @functools.wraps(content)
            def render() -> rx.Component:
                top = [rx.link(back[1], href=back[0])] if back else []
                if heading:
                    top.append(rx.heading(heading, size=heading_size, id="page-title"))
                return layout(*top, unless_refused(state, content()))
        PAGES.append(Page(render, route, title, on_load))
        return render

    return register


def add_pages(app: rx.App) -> None:
    """Add every registered page to `app`."""
    for found in PAGES:
        app.add_page(found.render, route=found.route, title=found.title, on_load=found.on_load)
