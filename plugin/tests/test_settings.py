"""Settings: options over the environment over the specification; a bad value is a sentence naming it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.settings_error import SettingsError

DSN = "http://3f2a@127.0.0.1:3000/2"


def test_an_option_overrides_its_variable() -> None:
    env = {"SENTRY_DSN": "https://abc@o1.ingest.sentry.io/7", "SENTRY_ENVIRONMENT": "staging"}
    settings = MonitoringSettings.resolve({"dsn": DSN}, env)
    assert str(settings.dsn) == DSN
    assert settings.environment == "staging"  # no option: the variable


def test_without_option_or_variable_the_specification_holds() -> None:
    settings = MonitoringSettings.resolve({}, {})
    assert settings.dsn is None and settings.tunnel_path == "/monitoring" and settings.traces_sample_rate == 1.0
    assert settings.environment == "development" and settings.log_level == logging.INFO


def test_prod_mode_is_the_production_environment() -> None:
    assert MonitoringSettings.resolve({}, {"REFLEX_ENV_MODE": "prod"}).environment == "production"


@pytest.mark.parametrize(("options", "env", "sentence"), [
    ({}, {"SENTRY_DSN": "not a dsn"}, "SENTRY_DSN 'not a dsn' must start with http:// or https://."),
    ({"dsn": "http://host/1"}, {}, "Monitoring(dsn=...) 'http://host/1' must name a public key and a host (key@host)."),
    ({}, {"SENTRY_DSN": "http://k@host/x"}, "SENTRY_DSN 'http://k@host/x' must end with a numeric project id."),
    ({"tunnel_path": "monitoring"}, {}, "Monitoring(tunnel_path=...) 'monitoring' must be an absolute path like /monitoring."),
    ({}, {"LOOKOUT_BROWSER_MONITORING": "maybe"}, "LOOKOUT_BROWSER_MONITORING 'maybe' must be on or off."),
    ({"traces_sample_rate": 2}, {}, "Monitoring(traces_sample_rate=...) 2 must be a number from 0 to 1."),
    ({"log_level": "LOUD"}, {}, "Monitoring(log_level=...) 'LOUD' must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL."),
    ({"colour": "red"}, {}, "Monitoring() has no option 'colour'."),
])
def test_a_bad_value_is_refused_with_a_sentence_naming_it(options: dict[str, object], env: dict[str, str],
                                                          sentence: str) -> None:
    with pytest.raises(SettingsError) as refused:
        MonitoringSettings.resolve(options, env)
    assert str(refused.value) == sentence


def test_the_outbox_is_a_hidden_sqlite_file_unless_told_otherwise(tmp_path: Path) -> None:
    assert MonitoringSettings.resolve({}, {}).outbox_url(tmp_path, None) == f"sqlite:///{tmp_path}/.lookout/outbox.db"
    assert MonitoringSettings.resolve({"outbox": "db"}, {}).outbox_url(tmp_path, "sqlite:///app.db") == "sqlite:///app.db"
    with pytest.raises(SettingsError, match="needs db_url"):
        MonitoringSettings.resolve({"outbox": "db"}, {}).outbox_url(tmp_path, None)
