"""The source-map step as `Monitoring` runs it for a host app (reflex_lookout/sourcemaps/upload_settings.py
and the plugin's hooks): on with SENTRY_AUTH_TOKEN only, read once, and left to a build step of the app's own."""

from __future__ import annotations

import inspect
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from reflex_base.compiler.templates import vite_config_template
from reflex_base.config import get_config
from reflex_base.constants import ReactRouter

from reflex_lookout import Monitoring
from reflex_lookout.sourcemaps.build_step import SourceMapsPlugin, hide_source_maps
from reflex_lookout.sourcemaps.upload_settings import UploadSettings, host_cli

TOKEN = "sntrys_secret-token-value"


def test_a_token_wants_uploads_and_is_never_shown() -> None:
    found = UploadSettings.from_environ({"SENTRY_AUTH_TOKEN": f" {TOKEN} ", "SENTRY_URL": "http://127.0.0.1:9/",
                                         "SENTRY_ORG": "o", "SENTRY_PROJECT": "p"})
    assert (found.wanted, found.url, found.org, found.project, found.token) == (True, "http://127.0.0.1:9", "o", "p", TOKEN)
    assert TOKEN not in repr(found)


@pytest.mark.parametrize("token", ["", "   ", "x" * 1001])
def test_no_usable_token_no_uploads(token: str) -> None:
    assert not UploadSettings.from_environ({"SENTRY_AUTH_TOKEN": token, "SENTRY_PROJECT": "p"}).wanted


def test_sentry_cli_is_the_environments_console_script_unless_named() -> None:
    assert host_cli({}) == Path(sysconfig.get_path("scripts")) / "sentry-cli"
    assert host_cli({"LOOKOUT_SENTRY_CLI": "/opt/sentry-cli"}) == Path("/opt/sentry-cli")


def _pre_compile(plugin: Monitoring) -> list[tuple[str, Any]]:
    tasks: list[tuple[str, Any]] = []
    plugin.pre_compile(add_save_task=lambda task: None, add_modify_task=lambda *task: tasks.append(task),
                       unevaluated_pages=[])  # type: ignore[call-arg]
    return tasks


def test_the_host_build_hides_its_maps_only_with_a_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))
    monkeypatch.delenv("SENTRY_DSN", raising=False)
    monkeypatch.delenv("SENTRY_AUTH_TOKEN", raising=False)
    without = Monitoring()
    monkeypatch.setattr(get_config(), "plugins", [without])
    assert _pre_compile(without) == []  # Reflex's default stays: no maps at all

    monkeypatch.setenv("SENTRY_AUTH_TOKEN", TOKEN)
    with_token = Monitoring()
    monkeypatch.setattr(get_config(), "plugins", [with_token])
    [(path, task)] = _pre_compile(with_token)
    options = {"base": "/", "hmr": True, "force_full_reload": False, "experimental_hmr": False, "prod_react": False,
               "warmup_routes": False, "react_compiler": False, "sourcemap": False, "minify": True,
               "allowed_hosts": False}
    known = inspect.signature(vite_config_template).parameters  # each Reflex release takes some of them
    template = vite_config_template(**{name: value for name, value in options.items() if name in known})
    assert path == ReactRouter.VITE_CONFIG_FILE and task(template) == hide_source_maps(template) != template
    assert task("export default {}") == "export default {}"  # a template it cannot edit: left as it is, said
    assert (tmp_path / "web" / "lookout-sourcemaps" / "pages.json").is_file()  # for the build step


def test_a_build_step_of_the_apps_own_runs_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Lookout installs its own (app/sourcemaps/own_build.py): the plugin's would inject and upload twice."""
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))
    monkeypatch.setenv("SENTRY_AUTH_TOKEN", TOKEN)
    plugin = Monitoring()
    own = SourceMapsPlugin(tmp_path / "sentry-cli", UploadSettings(True, "", "o", "p", TOKEN), for_library=True)
    monkeypatch.setattr(get_config(), "plugins", [own, plugin])
    assert _pre_compile(plugin) == []
    plugin.post_build(static_dir=tmp_path / "static")  # nothing to do, nothing raised
    assert not (tmp_path / "web").exists()
