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


def test_the_home_page_sums_session_updates_by_status_and_discards_by_reason() -> None:
    from app.pages.home import counted

    rows = counted({"r1|prod|crashed": 2, "r2|prod|crashed": 1, "r1|prod|exited": 6},
                   {"error|queue_overflow": 4, "transaction|sample_rate": 9, "span|queue_overflow": 1})
    assert rows == [("Sessions crashed", "3"), ("Sessions exited", "6"),
                    ("Discarded by SDKs (queue_overflow)", "5"), ("Discarded by SDKs (sample_rate)", "9")]
