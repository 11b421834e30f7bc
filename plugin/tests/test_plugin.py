"""The plugin's hooks: what each adds to the host app, once."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from reflex.app import default_backend_exception_handler, default_frontend_exception_handler

from reflex_lookout import Monitoring, backend, browser, runtime
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.sourcemaps import pages

DSN = "http://3f2a@127.0.0.1:3000/2"


@dataclass
class FakeApp:
    """The attributes of `rx.App` the plugin's hooks read and write."""

    head_components: list[Any] = field(default_factory=list)
    api_transformer: Any = None
    frontend_exception_handler: Any = default_frontend_exception_handler
    backend_exception_handler: Any = default_backend_exception_handler
    lifespan_tasks: list[Any] = field(default_factory=list)

    def register_lifespan_task(self, task: Any) -> Any:
        self.lifespan_tasks.append(task)
        return task


@dataclass
class FakePage:
    app_wrap_components: dict[Any, Any] = field(default_factory=dict)
    module_code: dict[str, None] = field(default_factory=dict)


@dataclass
class Unevaluated:
    """A page as Reflex hands it to `compile_page`: its component function."""

    component: Any


def index() -> None:
    """A page function of this project."""


@dataclass
class FakeCompile:
    app: FakeApp


@pytest.fixture(autouse=True)
def _no_dsn_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DSN from the environment and no runtime built yet."""
    monkeypatch.delenv("SENTRY_DSN", raising=False)
    monkeypatch.delenv("LOOKOUT_OUTBOX_URL", raising=False)
    monkeypatch.setattr(runtime, "_current", None)


@pytest.fixture
def in_app_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The backend runs in the app's folder, where the outbox file is made: a fresh one."""
    monkeypatch.chdir(tmp_path)


def test_each_page_gets_the_sdk_wrap_and_the_head_gets_config_and_loader_first_once() -> None:
    plugin, app = Monitoring(dsn=DSN), FakeApp(head_components=["theirs"])
    for _ in range(3):
        page = FakePage()
        plugin.compile_page(page, compile_context=FakeCompile(app))
        assert browser.APP_WRAP_KEY in page.app_wrap_components
    assert len(app.head_components) == 3 and app.head_components[2] == "theirs"
    assert browser.CONFIG_ELEMENT_ID in str(app.head_components[0])


def test_each_route_module_declares_its_python_page(monkeypatch: pytest.MonkeyPatch) -> None:
    # Reflex runs in the app's folder: here, the folder above plugin/ (whichever folder pytest runs in).
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    plugin, page = Monitoring(dsn=DSN), FakePage()
    plugin.compile_page(page, page=Unevaluated(index), compile_context=FakeCompile(FakeApp()))
    [line] = page.module_code
    assert line.startswith(pages.PAGE_MARKER)
    assert pages.from_json({"route": json.loads(line.removeprefix(pages.PAGE_MARKER))})["route"] == pages.PageSource(
        module=__name__, function="index", file="plugin/tests/test_plugin.py", line=index.__code__.co_firstlineno)
    elsewhere = FakePage()  # a page function outside the project (here: a built-in) declares nothing
    plugin.compile_page(elsewhere, page=Unevaluated(len), compile_context=FakeCompile(FakeApp()))
    assert elsewhere.module_code == {}


@pytest.mark.usefixtures("in_app_folder")
def test_the_backend_is_attached_once_with_the_tunnel_innermost() -> None:
    plugin, app = Monitoring(dsn=DSN), FakeApp(api_transformer=["their routes"])
    plugin.post_compile(app=app)
    plugin.post_compile(app=app)
    assert app.api_transformer[1:] == ["their routes"] and len(app.api_transformer) == 2
    assert app.frontend_exception_handler is not default_frontend_exception_handler
    assert app.backend_exception_handler.__name__ == "backend_exception_handler"
    built = runtime.current()
    assert built is not None and app.lifespan_tasks == [built.run_server_sdk, built.run_forwarder]


@pytest.mark.usefixtures("in_app_folder")
def test_the_outbox_is_a_hidden_sqlite_file_with_its_tables_and_out_of_git(tmp_path: Path) -> None:
    Monitoring(dsn=DSN).post_compile(app=FakeApp())
    built = runtime.current()
    assert built is not None and built.store.engine.url.database == str(tmp_path / ".lookout" / "outbox.db")
    assert (tmp_path / ".lookout" / ".gitignore").read_text() == "*\n"
    assert set(sqlalchemy.inspect(built.store.engine).get_table_names()) == {"outbox", "worker_lease"}


@pytest.mark.usefixtures("in_app_folder")
def test_a_process_with_its_own_runtime_gets_nothing_more() -> None:
    """Lookout builds its runtime in app/wiring.py before Reflex calls post_compile."""
    own = runtime.Runtime(MonitoringSettings.resolve({"dsn": DSN}, {}), OutboxStore(sqlalchemy.create_engine("sqlite://")))
    app = FakeApp()
    Monitoring(dsn=DSN).post_compile(app=app)
    assert runtime.current() is own and app.api_transformer is None and app.lifespan_tasks == []
    assert app.backend_exception_handler is default_backend_exception_handler


@pytest.mark.usefixtures("in_app_folder")
def test_without_a_dsn_nothing_is_added() -> None:
    plugin, app, page = Monitoring(), FakeApp(), FakePage()
    plugin.compile_page(page, compile_context=FakeCompile(app))
    plugin.post_compile(app=app)
    assert page.app_wrap_components == {} and app.head_components == [] and app.api_transformer is None


@pytest.mark.usefixtures("in_app_folder")
def test_a_custom_backend_handler_still_answers() -> None:
    def backend_exception_handler(exception: Exception) -> str:
        return "their toast"

    plugin, app = Monitoring(dsn=DSN), FakeApp(backend_exception_handler=backend_exception_handler)
    plugin.post_compile(app=app)
    assert app.backend_exception_handler(ValueError("x")) == "their toast"


def test_the_vite_proxy_edit_is_idempotent() -> None:
    config = 'export default {\n  base: "/",\n  server: {\n    port: 3000,\n  },\n};\n'
    once = browser.add_sentry_flags(browser.add_proxy(config, ("/monitoring",), "http://localhost:8000"), False)
    twice = browser.add_sentry_flags(browser.add_proxy(once, ("/monitoring",), "http://localhost:8000"), False)
    assert once == twice and once.count('"/monitoring"') == 1 and '"__SENTRY_DEBUG__": "false"' in once


def test_a_bad_setting_stops_the_start_with_a_sentence_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit) as stopped:
        Monitoring(traces_sample_rate=2)
    assert stopped.value.code == "reflex-lookout: Monitoring(traces_sample_rate=...) 2 must be a number from 0 to 1."
    monkeypatch.setenv("SENTRY_DSN", "not-a-dsn")
    with pytest.raises(SystemExit) as stopped:
        Monitoring()
    assert stopped.value.code == "reflex-lookout: SENTRY_DSN 'not-a-dsn' must start with http:// or https://."


@pytest.mark.usefixtures("in_app_folder")
def test_an_outbox_that_cannot_be_opened_is_said_once_and_the_app_serves_without_monitoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(backend, "_logged", set())
    (tmp_path / ".lookout").write_text("a file where the outbox's folder should be")
    apps = [FakeApp(), FakeApp()]
    with caplog.at_level("WARNING", logger="reflex_lookout"):
        for app in apps:  # two backend workers of one process's plugin
            Monitoring(dsn=DSN).post_compile(app=app)
    assert [r.getMessage() for r in caplog.records if r.name == "reflex_lookout"] == [
        "reflex-lookout could not open its outbox ([Errno 17] File exists: "
        f"'{tmp_path / '.lookout'}'); the app serves without monitoring"]
    for app in apps:
        assert app.api_transformer is None and app.lifespan_tasks == []
        assert app.backend_exception_handler is default_backend_exception_handler


def test_a_report_that_fails_leaves_the_hosts_handler_its_answer(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(exception: Exception) -> None:
        raise RuntimeError("the monitoring itself failed")

    monkeypatch.setattr(backend, "_logged", set())
    monkeypatch.setattr(backend.event_errors, "backend_exception_handler", broken)
    handler = backend.backend_handler(lambda exception: f"their answer to {exception}")
    with caplog.at_level("WARNING", logger="reflex_lookout"):
        assert [handler(ValueError(n)) for n in ("a", "b")] == ["their answer to a", "their answer to b"]
    assert [r.getMessage() for r in caplog.records if r.name == "reflex_lookout"] == [
        "reflex-lookout could not report an event handler's error; the app goes on"]
