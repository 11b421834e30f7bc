"""Lookout as the monitoring plugin's destination: its pages are built with the embedded inbox's DSN
(read from the database at compile time), or with SENTRY_DSN when it is set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy
from reflex.utils.prerequisites import get_web_dir

from app import local_inbox
from app.projects.registry import Projects
from app.settings import Settings
from reflex_lookout import Monitoring, browser
from reflex_lookout.settings_error import SettingsError

DESTINATION = local_inbox.destination  # the destination the plugin is given below (set by each test)


def built_config(monkeypatch: pytest.MonkeyPatch, destination: local_inbox.LocalInbox) -> tuple[dict[str, str], dict]:
    """The files Lookout's `Monitoring(...)` writes at compile time, with `destination` named as rxconfig.py names
    Lookout's, and the browser configuration in them."""
    monkeypatch.setitem(globals(), "DESTINATION", destination)
    tasks: list = []
    Monitoring(destination=f"{__name__}:DESTINATION").pre_compile(  # type: ignore[call-arg]  # the hook reads these two
        add_save_task=tasks.append, add_modify_task=lambda *_: None)
    [task] = tasks
    files = {Path(path).relative_to(get_web_dir()).as_posix(): text for path, text in task()}
    declaration = f"export const {browser.CONFIG_NAME} = "
    [line] = [line for line in files[browser.LOADER_MODULE].splitlines() if line.startswith(declaration)]
    return files, json.loads(json.loads(line.split(" = ", 1)[1].rstrip(";")))


def test_the_pages_built_carry_the_key_in_the_database(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """At compile time, as `reflex run` builds the pages: the database migrated, the key read."""
    files, config = built_config(monkeypatch, local_inbox.LocalInbox(Settings.from_env({}), engine))
    assert files[browser.SDK_MODULE] == browser.SDK_JS.read_text()
    assert files["app/entry.client.js"] == browser.ENTRY_CLIENT_JS.read_text()
    [local] = [p for p in Projects(engine).all() if p.id == 1]
    assert config["dsn"] == f"http://{local.public_key}@localhost/1"
    assert local.public_key != "lookout" and len(local.public_key) == 32


def test_with_sentry_dsn_the_pages_report_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    sentry = Settings.from_env({"SENTRY_DSN": "https://key@o1.ingest.example/7"})
    _, config = built_config(monkeypatch, local_inbox.LocalInbox(sentry))
    assert config["dsn"] == "https://key@o1.ingest.example/7"


def test_browser_monitoring_can_be_switched_off() -> None:
    assert Settings.from_env({}).browser
    assert not Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "off"}).browser
    with pytest.raises(SettingsError, match="LOOKOUT_BROWSER_MONITORING 'maybe' must be on or off"):
        Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "maybe"})
