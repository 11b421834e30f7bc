"""The `environment` of every report follows the mode `reflex run` runs in, whenever the settings were read.

`reflex run --env prod` reads rxconfig.py (the plugin's settings, and whatever the file imports: an app's
own settings module, as Lookout's) before it sets REFLEX_ENV_MODE, then forks its backend workers from
that process: settings read then must still say "production" in the server SDK, the pages' SDK
configuration and anything else that shows them."""

from __future__ import annotations

import os

import pytest
from reflex_base import constants
from reflex_base.environment import environment as reflex_environment

from reflex_lookout import Monitoring
from reflex_lookout.browser import browser_config
from reflex_lookout.dsn import Dsn
from reflex_lookout.server import server_options
from reflex_lookout.settings import MonitoringSettings

DSN = "http://3f2a@127.0.0.1:3000/2"


def said(settings: MonitoringSettings) -> tuple[str, str, str]:
    """The environment as the settings, the server SDK's options and the pages' SDK configuration say it."""
    return (settings.environment, server_options(settings, "my_app")["environment"],
            browser_config(settings, Dsn.parse(DSN))["environment"])


@pytest.mark.parametrize(("mode", "expected"), [(constants.Env.PROD, "production"), (constants.Env.DEV, "development")])
def test_settings_read_before_reflex_sets_its_mode_follow_the_mode(
    monkeypatch: pytest.MonkeyPatch, mode: constants.Env, expected: str
) -> None:
    monkeypatch.delenv("REFLEX_ENV_MODE", raising=False)  # and put back as it was after the test
    monkeypatch.delenv("SENTRY_ENVIRONMENT", raising=False)
    plugin = Monitoring(dsn=DSN)  # rxconfig.py, as `reflex run` first reads it
    from_the_environment = MonitoringSettings.resolve({"dsn": DSN}, os.environ)  # an app's settings module
    reflex_environment.REFLEX_ENV_MODE.set(mode)  # what `reflex run --env ...` does next (reflex/reflex.py)
    assert said(plugin.settings) == said(from_the_environment) == (expected, expected, expected)


def test_a_given_environment_holds_in_every_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SENTRY_ENVIRONMENT", "staging")
    plugin = Monitoring(dsn=DSN)
    monkeypatch.setenv("REFLEX_ENV_MODE", "prod")
    assert said(plugin.settings) == ("staging",) * 3
    assert said(Monitoring(dsn=DSN, environment="eu-1").settings) == ("eu-1",) * 3


def test_settings_read_from_a_mapping_take_its_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    assert MonitoringSettings.resolve({}, {"REFLEX_ENV_MODE": "prod"}).environment == "production"
    assert MonitoringSettings.resolve({}, {}).environment == "development"
