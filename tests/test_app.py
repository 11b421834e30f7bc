"""The app object: every page is registered, and start-up migrates the database."""

from app import routes, startup
from app.app import app


def test_pages_are_registered() -> None:
    registered = set(app._unevaluated_pages)
    assert {"index", routes.NOT_FOUND} <= registered


def test_navigation_links_point_at_registered_pages() -> None:
    registered = set(app._unevaluated_pages)
    for _label, path in routes.NAVIGATION:
        assert (path.strip("/") or "index") in registered


def test_startup_prepares_the_process() -> None:
    assert startup.prepare_process in app.get_lifespan_tasks()
