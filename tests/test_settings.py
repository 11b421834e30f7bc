import logging

import pytest

from app.settings import LocalDsnUnknown, Settings, local_dsn_with
from reflex_lookout.dsn import Dsn
from reflex_lookout.settings_error import SettingsError


def test_dsn_parts_and_round_trip() -> None:
    dsn = Dsn.parse("https://abc123@o1.ingest.example.com:8443/prefix/path/42")
    assert (dsn.scheme, dsn.public_key, dsn.host, dsn.port) == ("https", "abc123", "o1.ingest.example.com", 8443)
    assert (dsn.path_prefix, dsn.project_id) == ("/prefix/path", "42")
    assert str(dsn) == "https://abc123@o1.ingest.example.com:8443/prefix/path/42"
    assert dsn.netloc == "o1.ingest.example.com:8443"


def test_dsn_without_port_or_prefix() -> None:
    dsn = Dsn.parse("http://key@localhost/7")
    assert (dsn.port, dsn.path_prefix, dsn.project_id, dsn.netloc) == (None, "", "7", "localhost")


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("ftp://k@host/1", "http:// or https://"),
        ("https://host/1", "public key"),
        ("https://k@host/abc", "numeric project id"),
        ("https://k@host:99999/1", "invalid port"),
        ("a://[", "is not a URL"),  # found by the tunnel fuzz test: urlsplit raised ValueError
    ],
)
def test_bad_dsn_is_refused_with_a_sentence(text: str, complaint: str) -> None:
    with pytest.raises(SettingsError, match=complaint):
        Dsn.parse(text)


def test_the_environment_is_production_under_a_production_run_unless_set() -> None:
    assert Settings.from_env({"REFLEX_ENV_MODE": "prod"}).environment == "production"
    assert Settings.from_env({"REFLEX_ENV_MODE": "dev"}).environment == "development"
    assert Settings.from_env({"REFLEX_ENV_MODE": "prod", "SENTRY_ENVIRONMENT": "staging"}).environment == "staging"


def test_defaults_are_local_mode_and_the_spec_values() -> None:
    settings = Settings.from_env({})
    assert settings.dsn is None
    assert settings.destination == "local inbox"
    assert settings.tunnel_path == "/monitoring"
    assert settings.environment == "development"
    assert settings.release is None
    # Sections 8 and 9 of the specification.
    assert settings.traces_sample_rate == 1
    assert settings.enable_logs is True and settings.debug is False
    assert (settings.max_breadcrumbs, settings.transport_buffer_size) == (100, 64)
    assert (settings.max_stack_frames, settings.max_stack_line_length) == (50, 1024)
    assert (settings.idle_span_timeout_ms, settings.final_span_timeout_ms, settings.child_span_timeout_ms) == (
        1000, 30000, 15000,
    )
    assert settings.route_load_timeout_ms == 3800


def test_environment_overrides() -> None:
    settings = Settings.from_env({
        "SENTRY_DSN": "https://pub@sentry.example.org/3",
        "SENTRY_ENVIRONMENT": "staging",
        "SENTRY_RELEASE": "lookout@1.2.3",
        "LOOKOUT_TUNNEL_PATH": "/t/",
        "LOOKOUT_ROUTE_LOAD_TIMEOUT_MS": "5000",
    })
    assert settings.destination == "sentry.example.org"
    assert (settings.environment, settings.release, settings.tunnel_path) == ("staging", "lookout@1.2.3", "/t")
    assert settings.route_load_timeout_ms == 5000


def test_the_local_dsn_is_the_configured_one_or_comes_from_the_database() -> None:
    assert Settings.from_env({"LOOKOUT_LOCAL_DSN": "http://k@inbox.example/3"}).reporting_dsn == Dsn.parse("http://k@inbox.example/3")
    settings = Settings.from_env({})
    assert settings.local_dsn is None  # no fixed default key: this install's is read from its database
    with pytest.raises(LocalDsnUnknown, match="read from the database at start"):
        settings.reporting_dsn  # noqa: B018 (nothing may report with a key not read yet)
    settings.settle_local_dsn(local_dsn_with("f" * 32))
    assert str(settings.reporting_dsn) == f"http://{'f' * 32}@localhost/1" and "f" * 32 in str(settings.tunnel_dsns)


@pytest.mark.parametrize("path", ["monitoring", "/", "/a?b=1"])
def test_bad_tunnel_path_is_refused(path: str) -> None:
    with pytest.raises(SettingsError, match="LOOKOUT_TUNNEL_PATH"):
        Settings.from_env({"LOOKOUT_TUNNEL_PATH": path})


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_bad_route_timeout_is_refused(value: str) -> None:
    with pytest.raises(SettingsError, match="LOOKOUT_ROUTE_LOAD_TIMEOUT_MS"):
        Settings.from_env({"LOOKOUT_ROUTE_LOAD_TIMEOUT_MS": value})


def test_server_reporting_defaults_and_overrides() -> None:
    defaults = Settings.from_env({})
    assert defaults.server is True and defaults.log_level == logging.INFO
    settings = Settings.from_env({"LOOKOUT_SERVER_MONITORING": "off", "LOOKOUT_LOG_LEVEL": "warning"})
    assert settings.server is False and settings.log_level == logging.WARNING


@pytest.mark.parametrize("value", ["verbose", "10", "warn"])
def test_bad_log_level_is_refused(value: str) -> None:
    with pytest.raises(SettingsError, match="LOOKOUT_LOG_LEVEL .* must be one of DEBUG, INFO"):
        Settings.from_env({"LOOKOUT_LOG_LEVEL": value})


def test_inbox_retention_caps_come_from_the_environment() -> None:
    from app.inbox.retention import Caps

    assert Caps.from_settings(Settings.from_env({})) == Caps(10_000, 10_000, 50_000, 5_000, 30.0)
    settings = Settings.from_env({"LOOKOUT_INBOX_MAX_EVENTS": "500", "LOOKOUT_INBOX_MAX_AGE_DAYS": "7"})
    assert (Caps.from_settings(settings).events, Caps.from_settings(settings).max_age_days) == (500, 7.0)
    with pytest.raises(SettingsError, match="LOOKOUT_INBOX_MAX_LOGS 'many' must be a positive whole number"):
        Settings.from_env({"LOOKOUT_INBOX_MAX_LOGS": "many"})


def test_the_public_url_is_optional_and_must_be_a_url() -> None:
    assert Settings.from_env({}).public_url == ""
    assert Settings.from_env({"LOOKOUT_PUBLIC_URL": " https://lookout.example.com/ "}).public_url == "https://lookout.example.com"
    for bad in ("lookout.example.com", "ftp://lookout.example.com", "https://", "https://x.example:port", "https://x.example/?a=1"):
        with pytest.raises(SettingsError, match="LOOKOUT_PUBLIC_URL .* must be the URL users open"):
            Settings.from_env({"LOOKOUT_PUBLIC_URL": bad})


def test_intake_rates_and_inbox_budget_come_from_the_environment() -> None:
    from app.inbox.retention import Caps

    defaults = Settings.from_env({})
    assert (defaults.ingest_bytes_per_min_per_client, defaults.ingest_bytes_per_min_per_key) == (256 * 2**20, 2**30)
    assert (Caps.from_settings(defaults).issues, Caps.from_settings(defaults).max_bytes) == (10_000, 2**30)
    settings = Settings.from_env({
        "LOOKOUT_INGEST_BYTES_PER_MIN_PER_CLIENT": "0", "LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY": "5000",
        "LOOKOUT_INBOX_MAX_ISSUES": "20", "LOOKOUT_INBOX_MAX_BYTES": "1000000",
    })
    assert (settings.ingest_bytes_per_min_per_client, settings.ingest_bytes_per_min_per_key) == (0, 5000)  # 0: off
    assert (Caps.from_settings(settings).issues, Caps.from_settings(settings).max_bytes) == (20, 1_000_000)
    with pytest.raises(SettingsError, match="LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY '-1' must be a whole number"):
        Settings.from_env({"LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY": "-1"})
    with pytest.raises(SettingsError, match="LOOKOUT_INBOX_MAX_BYTES '0' must be a positive whole number"):
        Settings.from_env({"LOOKOUT_INBOX_MAX_BYTES": "0"})


def test_the_source_map_builds_kept_come_from_the_environment() -> None:
    assert Settings.from_env({}).sourcemap_builds == 20
    assert Settings.from_env({"LOOKOUT_SOURCEMAP_BUILDS": " 3 "}).sourcemap_builds == 3
    for bad in ("0", "-1", "many"):
        with pytest.raises(SettingsError, match=f"LOOKOUT_SOURCEMAP_BUILDS '{bad}' must be a positive whole number"):
            Settings.from_env({"LOOKOUT_SOURCEMAP_BUILDS": bad})
