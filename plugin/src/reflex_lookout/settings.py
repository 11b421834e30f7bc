"""The monitoring's settings: each `Monitoring(...)` option, else its environment variable, else the
specification's value; a value that cannot be used raises `SettingsError` with a sentence naming
where it came from (`Monitoring(dsn=...)` or `SENTRY_DSN`).

The single source of every monitoring setting: Lookout's own `app.settings.Settings` subclasses
`MonitoringSettings` and reads only its own fields (inbox, alerts, uploads) itself. How one value is
read (a DSN, a switch, a number): `Reader` (settings_reader.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflex_lookout.dsn import Dsn
from reflex_lookout.settings_error import SettingsError
from reflex_lookout.settings_reader import Reader

DEFAULT_TUNNEL_PATH = "/monitoring"
MIB = 1024 * 1024
OUTBOX_DIR = ".lookout"  # hidden: Reflex's hot reload does not watch hidden folders
MIN_TOKEN_CHARS = 16  # LOOKOUT_TUNNEL_STATS_TOKEN: a shorter secret is guessable
# What `Monitoring(...)` takes; every other field is the specification's.
OPTIONS = ("dsn", "environment", "release", "tunnel_path", "browser", "server", "traces_sample_rate", "log_level",
           "outbox", "route_load_timeout_ms", "scrub", "dev_overlay", "editor", "spotlight", "feedback")


@dataclass(frozen=True)
class MonitoringSettings:
    """What the browser SDK, the server SDK and the tunnel are built from. Fields with no option
    and no variable are fixed by the specification (the same values as Lookout's own)."""

    dsn: Dsn | None = None  # None: nothing to report to; the plugin says so once and stays out of the way
    # The environment given (Monitoring(environment=...), SENTRY_ENVIRONMENT); "": `environment` follows
    # the mode `reflex run` runs in.
    given_environment: str = ""
    # Where that mode (REFLEX_ENV_MODE) is read, when asked: the mapping the settings were read from;
    # None for the process's own environment (`reflex run` sets the variable after reading rxconfig.py).
    run_env: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    release: str | None = None
    tunnel_path: str = DEFAULT_TUNNEL_PATH
    browser: bool = True
    server: bool = True
    traces_sample_rate: float = 1.0
    log_level: int = logging.INFO
    # "": a SQLite file under the app's folder (`outbox_url`); "db": the app's own db_url; else a URL.
    outbox: str = ""
    route_load_timeout_ms: int = 3800
    # Sentry mode: scrub PII (Relay's defaults) before the outbox write, as a Relay in front of Sentry
    # would (LOOKOUT_SCRUB_BEFORE_FORWARD, Monitoring(scrub=True)); off, the bytes go to Sentry as sent.
    scrub: bool = False
    # Under `reflex run` (dev mode): the overlay of this tab's errors, traces and logs (dev_overlay.py;
    # REFLEX_LOOKOUT_DEV_OVERLAY); production builds carry none of it whatever this says.
    dev_overlay: bool = True
    # Where the overlay's frames open: a template with {path}, {line} and {column} (REFLEX_LOOKOUT_EDITOR:
    # a scheme such as vscode or cursor, or a template of its own).
    editor: str = "vscode://file{path}:{line}:{column}"  # {path} is absolute: vscode://file/home/...
    # Spotlight's sidecar (SENTRY_SPOTLIGHT: on, or its URL): each envelope is sent there too ("": off).
    spotlight: str = ""
    # Sentry's user feedback widget in the pages (REFLEX_LOOKOUT_FEEDBACK; js/feedback.js).
    feedback: bool = False
    # Further DSNs the tunnel accepts besides `dsn` (SENTRY_TUNNEL_ALLOWED_DSNS).
    extra_tunnel_dsns: tuple[Dsn, ...] = ()
    # Origins besides the app's own that may post to the tunnel (LOOKOUT_TUNNEL_ALLOWED_ORIGINS).
    tunnel_origins: tuple[str, ...] = ()
    # How many X-Forwarded-For entries, added by proxies on this machine, are believed
    # (LOOKOUT_TRUSTED_PROXY_HOPS; reflex_lookout/protocol/clients.py). 0 believes none.
    trusted_proxy_hops: int = 1
    # Caps, modelled on Sentry Relay's defaults.
    max_item_bytes: int = 1 * MIB
    max_request_bytes: int = 20 * MIB
    max_envelope_bytes: int = 100 * MIB
    outbox_max_bytes: int = 512 * MIB
    # Intake rates, in bytes as received per minute, per client address and per DSN (project key):
    # past them the tunnel (and Lookout's ingest endpoints) answer 429 (intake_limits.py). 0: no limit.
    ingest_bytes_per_min_per_client: int = 256 * MIB
    ingest_bytes_per_min_per_key: int = 1024 * MIB
    # A request's whole body must arrive within this (a trickling client is answered 408).
    body_timeout_s: int = 30
    # Delivery to upstream; retries: the first after about LOOKOUT_RETRY_BASE_S, doubling up to the max.
    forward_concurrency: int = 4
    forward_timeout_s: float = 10.0
    retry_base_s: float = 1.0
    retry_max_s: float = 300.0
    # Fixed by the specification (sections 8 and 9).
    enable_logs: bool = True
    debug: bool = False
    max_breadcrumbs: int = 100
    transport_buffer_size: int = 64
    max_stack_frames: int = 50
    max_stack_line_length: int = 1024
    idle_span_timeout_ms: int = 1000
    final_span_timeout_ms: int = 30000
    child_span_timeout_ms: int = 15000
    loader_envelope_max_bytes: int = 16384
    ignored_errors: tuple[str, ...] = (
        r"^Script error\.?$",
        r"^Javascript error: Script error\.? on line 0$",
        r"^ResizeObserver loop completed with undelivered notifications\.?$",
        r"^ResizeObserver loop limit exceeded$",
        r"_AutofillCallbackHandler",
    )
    not_found_route_id: str = "routes/[404]._index"
    # `GET {tunnel_path}/stats` (tunnel.py): off in a host app unless LOOKOUT_TUNNEL_STATS is on; then
    # answered to this machine, and to a request carrying LOOKOUT_TUNNEL_STATS_TOKEN as a bearer token.
    tunnel_stats: bool = False
    tunnel_stats_token: str = field(default="", repr=False)

    @classmethod
    def resolve(cls, options: Mapping[str, object], env: Mapping[str, str]) -> MonitoringSettings:
        """Each option given (not None), else its variable, else the default."""
        return cls(**cls.fields_from(options, env))

    @classmethod
    def fields_from(cls, options: Mapping[str, object], env: Mapping[str, str]) -> dict[str, Any]:
        """The monitoring's fields, as `resolve` makes them: a subclass (Lookout's settings) adds its own."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise SettingsError(f"Monitoring() has no option {unknown[0]!r}.")
        read = Reader(options, env)
        defaults = MonitoringSettings()
        return dict(
            dsn=read.dsn("dsn", "SENTRY_DSN"),
            given_environment=read.text("environment", "SENTRY_ENVIRONMENT"),
            run_env=None if env is os.environ else env,
            release=read.text("release", "SENTRY_RELEASE") or None,
            tunnel_path=read.path("tunnel_path", "LOOKOUT_TUNNEL_PATH") or defaults.tunnel_path,
            browser=read.switch("browser", "LOOKOUT_BROWSER_MONITORING", defaults.browser),
            server=read.switch("server", "LOOKOUT_SERVER_MONITORING", defaults.server),
            traces_sample_rate=read.rate("traces_sample_rate", "SENTRY_TRACES_SAMPLE_RATE", defaults.traces_sample_rate),
            log_level=read.level("log_level", "LOOKOUT_LOG_LEVEL", defaults.log_level),
            outbox=read.text("outbox", "LOOKOUT_OUTBOX_URL"),
            route_load_timeout_ms=read.positive("route_load_timeout_ms", "LOOKOUT_ROUTE_LOAD_TIMEOUT_MS",
                                                defaults.route_load_timeout_ms),
            scrub=read.switch("scrub", "LOOKOUT_SCRUB_BEFORE_FORWARD", defaults.scrub),
            dev_overlay=read.switch("dev_overlay", "REFLEX_LOOKOUT_DEV_OVERLAY", defaults.dev_overlay),
            editor=read.editor("editor", "REFLEX_LOOKOUT_EDITOR", defaults.editor),
            spotlight=read.sidecar("spotlight", "SENTRY_SPOTLIGHT"),
            feedback=read.switch("feedback", "REFLEX_LOOKOUT_FEEDBACK", defaults.feedback),
            # Variables only (no option): the tunnel's and the forwarder's limits.
            extra_tunnel_dsns=tuple(Dsn.parse(d) for d in read.words("SENTRY_TUNNEL_ALLOWED_DSNS")),
            tunnel_origins=tuple(o.rstrip("/") for o in read.words("LOOKOUT_TUNNEL_ALLOWED_ORIGINS")),
            trusted_proxy_hops=read.whole("LOOKOUT_TRUSTED_PROXY_HOPS", defaults.trusted_proxy_hops),
            max_item_bytes=read.positive("", "LOOKOUT_MAX_ITEM_BYTES", defaults.max_item_bytes),
            max_request_bytes=read.positive("", "LOOKOUT_MAX_REQUEST_BYTES", defaults.max_request_bytes),
            max_envelope_bytes=read.positive("", "LOOKOUT_MAX_ENVELOPE_BYTES", defaults.max_envelope_bytes),
            outbox_max_bytes=read.positive("", "LOOKOUT_OUTBOX_MAX_BYTES", defaults.outbox_max_bytes),
            ingest_bytes_per_min_per_client=read.whole("LOOKOUT_INGEST_BYTES_PER_MIN_PER_CLIENT",
                                                       defaults.ingest_bytes_per_min_per_client),
            ingest_bytes_per_min_per_key=read.whole("LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY",
                                                    defaults.ingest_bytes_per_min_per_key),
            body_timeout_s=read.positive("", "LOOKOUT_BODY_TIMEOUT_S", defaults.body_timeout_s),
            retry_base_s=float(read.positive("", "LOOKOUT_RETRY_BASE_S", int(defaults.retry_base_s))),
            retry_max_s=float(read.positive("", "LOOKOUT_RETRY_MAX_S", int(defaults.retry_max_s))),
            tunnel_stats=read.switch("", "LOOKOUT_TUNNEL_STATS", defaults.tunnel_stats),
            tunnel_stats_token=read.secret("LOOKOUT_TUNNEL_STATS_TOKEN", MIN_TOKEN_CHARS),
        )

    @property
    def environment(self) -> str:
        """The `environment` of every report: the one given, else "production" under `reflex run --env
        prod` and "development" otherwise. The mode is read when asked, not when the settings were
        made: `reflex run` reads rxconfig.py (this plugin's settings, and whatever the file imports: an
        app's own settings module) before it sets REFLEX_ENV_MODE, and its production backend workers
        are forked from that process, so a value fixed then would say "development" under prod."""
        if self.given_environment:
            return self.given_environment
        mode = (os.environ if self.run_env is None else self.run_env).get("REFLEX_ENV_MODE", "")
        return "production" if mode.strip() == "prod" else "development"

    @property
    def dev_mode(self) -> bool:
        """Whether this is `reflex run` in dev mode (REFLEX_ENV_MODE "dev", read when asked, as
        `environment` reads it); `--env prod` and `reflex export` are not."""
        return (os.environ if self.run_env is None else self.run_env).get("REFLEX_ENV_MODE", "").strip() == "dev"

    @property
    def shows_dev_overlay(self) -> bool:
        """The dev overlay is built into the pages and served by the backend (dev mode, browser monitoring on)."""
        return self.dev_overlay and self.browser and self.dev_mode

    @property
    def reporting_dsn(self) -> Dsn:
        """The DSN the SDKs report with (Lookout's settings answer its embedded inbox's when no DSN is set)."""
        if self.dsn is None:
            raise SettingsError("No DSN (SENTRY_DSN, or Monitoring(dsn=...)): nothing may report.")
        return self.dsn

    @property
    def tunnel_dsns(self) -> frozenset[Dsn]:
        """The DSNs an envelope may name to pass the tunnel."""
        return frozenset({self.reporting_dsn, *self.extra_tunnel_dsns})

    @property
    def destination(self) -> str:
        """Where reports go, in words: the DSN's host."""
        return self.dsn.netloc if self.dsn else "nowhere"

    def outbox_url(self, app_root: Path, db_url: str | None) -> str:
        """Where the outbox is: a SQLite file in the app's hidden `.lookout/` folder by default,
        the app's `db_url` for `outbox="db"`, or the URL given."""
        if self.outbox == "db":
            if not db_url:
                raise SettingsError('Monitoring(outbox="db") needs db_url in rxconfig.py, and it has none.')
            return db_url
        if self.outbox:
            return self.outbox
        return f"sqlite:///{app_root / OUTBOX_DIR / 'outbox.db'}"
