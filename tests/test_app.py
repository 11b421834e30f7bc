"""The app object: every page is registered, and start-up migrates the database."""

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse

from app import db, routes, startup, wiring
from app.app import app
from app.console import state as console
from app.settings import SETTINGS


def test_pages_are_registered() -> None:
    registered = set(app._unevaluated_pages)
    assert {"index", routes.NOT_FOUND} <= registered


def test_navigation_links_point_at_registered_pages() -> None:
    registered = set(app._unevaluated_pages)
    for _label, path in routes.NAVIGATION:
        assert (path.strip("/") or "index") in registered


def test_startup_prepares_the_process() -> None:
    assert startup.prepare_process in app.get_lifespan_tasks()


def test_the_home_page_shows_sessions_by_how_they_ended_and_discards_by_reason() -> None:
    from app.pages.home import counted

    rows = counted({"healthy": 6, "errored": 0, "abnormal": 0, "crashed": 3},
                   {"error|queue_overflow": 4, "transaction|sample_rate": 9, "span|queue_overflow": 1})
    assert rows == [("Sessions healthy", "6"), ("Sessions crashed", "3"),
                    ("Discarded by SDKs (queue_overflow)", "5"), ("Discarded by SDKs (sample_rate)", "9")]


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The backend's whole ASGI app as Reflex builds it (without compiling the pages), origin guard
    and Reflex's CORS layer included, with Lookout's parts on a database of its own; no lifespan runs.
    Built once: Reflex mounts on every build."""
    engine = db.migrated_engine(f"sqlite:///{tmp_path_factory.mktemp('backend') / 'lookout.db'}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(app, "_compile", lambda **_: None)
        app.wire(wiring.Lookout(engine=engine))
        yield TestClient(app(), base_url="http://localhost:8000", client=("127.0.0.1", 5000))
    console.serve_in()


def test_another_sites_page_gets_no_inbox_data_and_no_cors_grant(backend: TestClient) -> None:
    refused = backend.get("/api/inbox/issues", headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
    preflight = backend.options("/api/inbox/issues", headers={"Origin": "https://evil.example",
                                                              "Access-Control-Request-Method": "GET"})
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers


def test_the_websocket_refuses_another_sites_page(backend: TestClient) -> None:
    path = "/_event/?EIO=4&transport=websocket"
    with pytest.raises(WebSocketDenialResponse) as denied:
        with backend.websocket_connect(path, headers={"Origin": "https://evil.example", "Upgrade": "websocket"}):
            pass
    assert denied.value.status_code == 403
    with backend.websocket_connect(path, headers={"Origin": "http://localhost:3000", "Upgrade": "websocket"}) as own:
        assert own.receive_text().startswith('0{"sid":')  # dev: the page on :3000, the backend on :8000


def test_the_ingest_endpoints_still_answer_preflights_from_any_origin(backend: TestClient) -> None:
    preflight = backend.options("/api/1/envelope/", headers={"Origin": "https://other.example",
                                                             "Access-Control-Request-Method": "POST"})
    assert preflight.status_code in (200, 204)
    assert preflight.headers["access-control-allow-origin"] in ("*", "https://other.example")
    tunnel = backend.post(SETTINGS.tunnel_path, content=b"{}", headers={"Origin": "https://other.example"})
    assert tunnel.json() == {"detail": "This origin may not post to the tunnel."}  # the tunnel's own check


def test_the_tunnels_stats_need_the_consoles_access(backend: TestClient) -> None:
    elsewhere = TestClient(backend.app, base_url="http://lookout.example.com", client=("203.0.113.9", 5000))
    refused = elsewhere.get(f"{SETTINGS.tunnel_path}/stats")
    assert refused.status_code == 401 and "Sign in" in refused.json()["detail"]
    stats = backend.get(f"{SETTINGS.tunnel_path}/stats")
    assert stats.status_code == 200 and {"accepted", "outbox", "rate_limits"} <= stats.json().keys()


def test_sentrys_web_api_answers_any_origin_without_credentials(backend: TestClient) -> None:
    preflight = backend.options("/api/0/organizations/", headers={"Origin": "https://other.example",
                                                                  "Access-Control-Request-Method": "GET"})
    assert preflight.headers["access-control-allow-origin"] == "*"
    refused = backend.get("/api/0/organizations/", headers={"Origin": "https://other.example"})
    assert refused.status_code == 401 and "No API token" in refused.json()["detail"]
    assert refused.headers["access-control-allow-origin"] == "*" and "access-control-allow-credentials" not in refused.headers


def test_the_parts_are_built_when_the_backend_starts_not_when_the_pages_compile() -> None:
    """Importing the app (what the front end's compile does) builds no part of Lookout; building the backend's
    ASGI app builds them once and runs their tasks after the start-up's."""
    import subprocess
    import sys

    script = ("import app.app as m; from app import wiring; print(wiring.lookout.cache_info().currsize);"
              "m.app._compile = lambda **_: None; m.app(); m.app();"
              "print(wiring.lookout.cache_info().currsize, [t.__name__ for t in m.app.get_lifespan_tasks()])")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    imported, built = run.stdout.splitlines()[-2:]
    assert imported == "0"
    assert built.startswith("1 [") and built.endswith(  # Reflex's own tasks first
        "'prepare_process', 'retry_at_start', 'run_server_sdk', 'run_forwarder', 'run_inbox']")
