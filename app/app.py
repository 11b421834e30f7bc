"""Builds the Reflex app: pages, the tunnel's API routes, start-up tasks."""

import reflex as rx

from app import routes, startup
from app.monitoring import pipeline
from app.pages import home, not_found

app = rx.App(api_transformer=pipeline.tunnel.asgi)
app.add_page(home.page, route=routes.HOME, title=home.TITLE, on_load=home.HomeState.load)
app.add_page(not_found.page, route=routes.NOT_FOUND, title=not_found.TITLE)
# In order: the schema must be current before the forwarder reads the outbox.
app.register_lifespan_task(startup.prepare_process)
app.register_lifespan_task(pipeline.run_forwarder)
