"""`@page_at` (app/components/page.py): every route of app/routes.py has exactly one page, declared by
its module, and a console page is drawn in the console's frame."""

from __future__ import annotations

import importlib
import pkgutil

import reflex as rx

import app.pages
from app import routes
from app.components.page import PAGES


def test_every_route_has_one_page_declared_by_its_module() -> None:
    for module in pkgutil.iter_modules(app.pages.__path__):
        importlib.import_module(f"app.pages.{module.name}")
    declared = [found.route for found in PAGES]
    constants = {value for name, value in vars(routes).items() if name.isupper() and isinstance(value, str)}
    assert sorted(declared) == sorted(set(declared))  # none twice
    assert set(declared) == constants
    assert all(found.title.endswith("Lookout") for found in PAGES)


def test_a_console_page_has_the_frame_and_the_refusal_and_a_plain_page_has_neither() -> None:
    from app.pages import logs, not_found

    console = str(logs.page())
    assert "lookout-header" in console and "page-title" in console and "console-refused" in console
    assert "logs-search" in console  # the module's own content, inside
    plain = str(not_found.page())
    assert "lookout-header" in plain and "console-refused" not in plain
    assert isinstance(logs.page(), rx.Component)
