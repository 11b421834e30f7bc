"""Builds the Reflex app: pages, start-up tasks (and, with later issues, API routes)."""

import reflex as rx

from app import routes, startup
from app.pages import home, not_found

app = rx.App()
app.add_page(home.page, route=routes.HOME, title=home.TITLE, on_load=home.HomeState.load)
app.add_page(not_found.page, route=routes.NOT_FOUND, title=not_found.TITLE)
app.register_lifespan_task(startup.migrate_database)
