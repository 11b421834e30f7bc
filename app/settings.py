"""Every error-reporting constant, read from the environment once.

This module is the single source of truth: the browser configuration, the backend SDK and the
tunnel are all built from `SETTINGS`. Nothing here is repeated by hand anywhere else. One value
comes from the database instead: the embedded inbox's own DSN key, random per install, unless
LOOKOUT_LOCAL_DSN names one (`Settings.local_dsn`, filled in by app/inbox/projects.py). How one
value is read (a DSN, a switch, a number): app/settings_parse.py.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.settings_parse import Dsn, SettingsError, log_level, positive_int, public_url, switch, whole_number, words

DEFAULT_TUNNEL_PATH = "/monitoring"
# The embedded inbox's project when LOOKOUT_LOCAL_DSN is not set: its DSN is
# http://<random key>@localhost/1 (`local_dsn_with`); the browser sends through the tunnel, so the
# host is an identity, never contacted.
LOCAL_PROJECT_ID = 1
MIB = 1024 * 1024


class LocalDsnUnknown(RuntimeError):
    """The local DSN was needed before it was read from the database."""


def local_dsn_with(public_key: str) -> Dsn:
    """The embedded inbox's DSN when LOOKOUT_LOCAL_DSN is not set, with this install's key."""
    return Dsn("http", public_key, "localhost", None, "", str(LOCAL_PROJECT_ID))


@dataclass(frozen=True)
class Settings:
    """Error-reporting settings. Fields without an environment variable are fixed by the spec."""

    dsn: Dsn | None
    environment: str
    release: str | None
    tunnel_path: str
    # The DSN that names the embedded inbox: LOOKOUT_LOCAL_DSN, or (None here) this install's own,
    # read from the database at start and at compile time (`settle_local_dsn`).
    local_dsn: Dsn | None = None
    # Whether pages carry the browser SDK (LOOKOUT_BROWSER_MONITORING=off leaves it out).
    browser_monitoring: bool = True
    # Whether the backend process reports with sentry-sdk (LOOKOUT_SERVER_MONITORING=off: it does not).
    server_monitoring: bool = True
    # Python logging records at this level and above become Sentry logs and breadcrumbs
    # (LOOKOUT_LOG_LEVEL); ERROR and above also become error events, as sentry-sdk does by default.
    log_level: int = logging.INFO
    # Inbox retention (local mode), per project; every issue keeps its first and latest event.
    inbox_max_events: int = 10_000
    inbox_max_transactions: int = 10_000
    inbox_max_logs: int = 50_000
    inbox_max_raw_envelopes: int = 5_000
    inbox_max_age_days: int = 30
    inbox_max_issues: int = 10_000
    # Everything the inbox keeps, in bytes (LOOKOUT_INBOX_MAX_BYTES; app/inbox/budget.py).
    inbox_max_bytes: int = 1024 * MIB
    # Production builds whose source maps are kept, on disk and in the database (LOOKOUT_SOURCEMAP_BUILDS;
    # app/sourcemaps/): tabs opened before a deploy still symbolicate.
    sourcemap_builds: int = 20
    # What symbolicating one event may cost (app/sourcemaps/symbolicate.py): the bytes of the maps it
    # loads past the cache, files included (LOOKOUT_SYMBOLICATE_MAX_BYTES; also the largest pair an
    # upload may hold), and the CPU time of the thread doing it (LOOKOUT_SYMBOLICATE_MAX_CPU_MS).
    symbolicate_max_bytes: int = 32 * MIB
    symbolicate_max_cpu_ms: int = 1000
    # Sentry mode: where the build uploads its source maps with sentry-cli (reflex_lookout/sourcemaps/to_sentry.py):
    # SENTRY_AUTH_TOKEN (never shown or logged), SENTRY_ORG, SENTRY_PROJECT, SENTRY_URL ("": sentry.io).
    sentry_auth_token: str = field(default="", repr=False)
    sentry_org: str = ""
    sentry_project: str = ""
    sentry_url: str = ""
    # sentry-cli's upload API (app/sourcemaps/upload_api.py): the largest chunk (LOOKOUT_UPLOAD_CHUNK_BYTES, also
    # what the chunk-upload options tell the CLI), chunks per request, the largest artifact bundle
    # (LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES) and what one project's uploads may keep (LOOKOUT_UPLOAD_MAX_PROJECT_BYTES).
    upload_chunk_bytes: int = 8 * MIB
    upload_chunks_per_request: int = 4
    upload_max_bundle_bytes: int = 256 * MIB
    upload_max_project_bytes: int = 1024 * MIB
    # Alerts (app/alerts/): the SMTP server e-mail goes through (LOOKOUT_SMTP_URL, smtp://user:password@host:port
    # with STARTTLS when offered, smtps:// for TLS; "" for none), its From address (LOOKOUT_ALERT_FROM), and
    # the channels every project alerts to: addresses (LOOKOUT_ALERT_EMAILS) and `kind=url` webhooks
    # (LOOKOUT_ALERT_WEBHOOKS; app/alerts/channels.py parses them).
    smtp_url: str = ""
    alert_from: str = ""
    alert_emails: tuple[str, ...] = ()
    alert_webhooks: tuple[str, ...] = ()
    # Hosts and networks (CIDR) a webhook may reach although they are not global addresses
    # (LOOKOUT_WEBHOOK_ALLOW; app/alerts/outbound.py).
    webhook_allow: tuple[str, ...] = ()
    # Further DSNs the tunnel accepts besides `dsn` (SENTRY_TUNNEL_ALLOWED_DSNS).
    extra_tunnel_dsns: tuple[Dsn, ...] = ()
    # Origins besides the app's own that may post to the tunnel (LOOKOUT_TUNNEL_ALLOWED_ORIGINS).
    tunnel_origins: tuple[str, ...] = ()
    # How many X-Forwarded-For entries, added by proxies on this machine, are believed
    # (LOOKOUT_TRUSTED_PROXY_HOPS; app/protocol/clients.py). 0 believes none.
    trusted_proxy_hops: int = 1
    # The address users reach Lookout at, e.g. https://lookout.example.com (LOOKOUT_PUBLIC_URL; "" for
    # none): its host counts as this machine's name and its origin as the app's own (app/console/access.py).
    public_url: str = ""
    # Caps, modelled on Sentry Relay's defaults.
    max_item_bytes: int = 1 * MIB
    max_request_bytes: int = 20 * MIB
    max_envelope_bytes: int = 100 * MIB
    outbox_max_bytes: int = 512 * MIB
    # Intake rates, in bytes as received per minute, per client address and per DSN (project key):
    # past them the tunnel and the ingest endpoints answer 429 (app/monitoring/intake_limits.py). 0: no limit.
    ingest_bytes_per_min_per_client: int = 256 * MIB
    ingest_bytes_per_min_per_key: int = 1024 * MIB
    # Security reports (CSP, Expect-CT, HPKP) per minute per project key, a budget of their own beside
    # the errors' (app/ingest/security_reports.py): a page that violates its policy on every view
    # must not crowd out the project's errors. 0: no limit.
    security_reports_per_min_per_key: int = 600
    # A request's whole body must arrive within this (a trickling client is answered 408).
    body_timeout_s: int = 30
    # Delivery to upstream.
    forward_concurrency: int = 4
    forward_timeout_s: float = 10.0
    retry_base_s: float = 1.0
    retry_max_s: float = 300.0
    # Fixed by the specification (sections 8 and 9).
    traces_sample_rate: float = 1.0
    enable_logs: bool = True
    debug: bool = False
    max_breadcrumbs: int = 100
    transport_buffer_size: int = 64
    max_stack_frames: int = 50
    max_stack_line_length: int = 1024
    idle_span_timeout_ms: int = 1000
    final_span_timeout_ms: int = 30000
    child_span_timeout_ms: int = 15000
    route_load_timeout_ms: int = 3800
    # Our own: an envelope the loader sends itself (the page left before the SDK arrived) stays under
    # this many bytes, older breadcrumbs and outer frames going first, so four fit in the browser's
    # 64 KB in-flight quota for beacons and keepalive requests.
    loader_envelope_max_bytes: int = 16384
    # Browser errors dropped as noise (spec section 8), as anchored regular expressions matched
    # against an event's message and each exception's "Type: value" and value, as Sentry does.
    ignored_errors: tuple[str, ...] = (
        r"^Script error\.?$",  # a cross-origin script's error, details withheld by the browser
        r"^Javascript error: Script error\.? on line 0$",
        r"^ResizeObserver loop completed with undelivered notifications\.?$",
        r"^ResizeObserver loop limit exceeded$",
        r"_AutofillCallbackHandler",  # iOS WebView autofill ("Can't find variable: _AutofillCallbackHandler")
    )
    # React Router's id for the not-found route (`app.add_page(..., route="404")`): its
    # transactions are ignored (spec section 9).
    not_found_route_id: str = "routes/[404]._index"

    @property
    def can_mail(self) -> bool:
        """Whether this server can send e-mail: it has an SMTP server and a From address."""
        return bool(self.smtp_url and self.alert_from)

    @property
    def reporting_dsn(self) -> Dsn:
        """The DSN every SDK of this app reports with: Sentry's, or the embedded inbox's."""
        if self.dsn is not None:
            return self.dsn
        if self.local_dsn is None:
            raise LocalDsnUnknown("The local DSN's key is read from the database at start (app/inbox/projects.py); "
                                  "nothing may report before.")
        return self.local_dsn

    def settle_local_dsn(self, dsn: Dsn) -> None:
        """Fill in this install's own local DSN, once per process, before anything reports: the one
        field read from the database, so it is written in place, where everything built from these
        settings sees it."""
        object.__setattr__(self, "local_dsn", dsn)

    @property
    def tunnel_dsns(self) -> frozenset[Dsn]:
        """The DSNs an envelope may name to pass the tunnel."""
        return frozenset({self.reporting_dsn, *self.extra_tunnel_dsns})

    @property
    def destination(self) -> str:
        """Where reports go, in words: the DSN's host, or the embedded inbox."""
        return self.dsn.netloc if self.dsn else "local inbox"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Settings:
        dsn_text = env.get("SENTRY_DSN", "").strip()
        tunnel_path = env.get("LOOKOUT_TUNNEL_PATH", DEFAULT_TUNNEL_PATH).strip()
        if not tunnel_path.startswith("/") or tunnel_path == "/" or "?" in tunnel_path:
            raise SettingsError(
                f"LOOKOUT_TUNNEL_PATH {tunnel_path!r} must be an absolute path like /monitoring."
            )
        defaults = cls(dsn=None, environment="", release=None, tunnel_path=DEFAULT_TUNNEL_PATH)
        return cls(
            dsn=Dsn.parse(dsn_text) if dsn_text else None,
            # Unset: what `reflex run` was started as (it sets REFLEX_ENV_MODE before the app is imported).
            environment=env.get("SENTRY_ENVIRONMENT", "").strip()
            or ("production" if env.get("REFLEX_ENV_MODE", "").strip() == "prod" else "development"),
            release=env.get("SENTRY_RELEASE", "").strip() or None,
            tunnel_path=tunnel_path.rstrip("/"),
            local_dsn=Dsn.parse(local) if (local := env.get("LOOKOUT_LOCAL_DSN", "").strip()) else None,
            extra_tunnel_dsns=tuple(Dsn.parse(d) for d in words(env.get("SENTRY_TUNNEL_ALLOWED_DSNS", ""))),
            tunnel_origins=tuple(o.rstrip("/") for o in words(env.get("LOOKOUT_TUNNEL_ALLOWED_ORIGINS", ""))),
            trusted_proxy_hops=whole_number(env, "LOOKOUT_TRUSTED_PROXY_HOPS", defaults.trusted_proxy_hops),
            public_url=public_url(env, "LOOKOUT_PUBLIC_URL"),
            smtp_url=env.get("LOOKOUT_SMTP_URL", "").strip(),
            alert_from=env.get("LOOKOUT_ALERT_FROM", "").strip(),
            alert_emails=tuple(words(env.get("LOOKOUT_ALERT_EMAILS", ""))),
            alert_webhooks=tuple(w.strip() for w in env.get("LOOKOUT_ALERT_WEBHOOKS", "").split(",") if w.strip()),
            webhook_allow=tuple(words(env.get("LOOKOUT_WEBHOOK_ALLOW", ""))),
            max_item_bytes=positive_int(env, "LOOKOUT_MAX_ITEM_BYTES", defaults.max_item_bytes),
            max_request_bytes=positive_int(env, "LOOKOUT_MAX_REQUEST_BYTES", defaults.max_request_bytes),
            max_envelope_bytes=positive_int(env, "LOOKOUT_MAX_ENVELOPE_BYTES", defaults.max_envelope_bytes),
            outbox_max_bytes=positive_int(env, "LOOKOUT_OUTBOX_MAX_BYTES", defaults.outbox_max_bytes),
            ingest_bytes_per_min_per_client=whole_number(
                env, "LOOKOUT_INGEST_BYTES_PER_MIN_PER_CLIENT", defaults.ingest_bytes_per_min_per_client),
            ingest_bytes_per_min_per_key=whole_number(
                env, "LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY", defaults.ingest_bytes_per_min_per_key),
            security_reports_per_min_per_key=whole_number(
                env, "LOOKOUT_SECURITY_REPORTS_PER_MIN_PER_KEY", defaults.security_reports_per_min_per_key),
            body_timeout_s=positive_int(env, "LOOKOUT_BODY_TIMEOUT_S", defaults.body_timeout_s),
            # Delivery retries: the first after about LOOKOUT_RETRY_BASE_S, doubling up to the max.
            retry_base_s=positive_int(env, "LOOKOUT_RETRY_BASE_S", int(defaults.retry_base_s)),
            retry_max_s=positive_int(env, "LOOKOUT_RETRY_MAX_S", int(defaults.retry_max_s)),
            route_load_timeout_ms=positive_int(
                env, "LOOKOUT_ROUTE_LOAD_TIMEOUT_MS", defaults.route_load_timeout_ms
            ),
            browser_monitoring=switch(env, "LOOKOUT_BROWSER_MONITORING", defaults.browser_monitoring),
            server_monitoring=switch(env, "LOOKOUT_SERVER_MONITORING", defaults.server_monitoring),
            log_level=log_level(env, "LOOKOUT_LOG_LEVEL", defaults.log_level),
            inbox_max_events=positive_int(env, "LOOKOUT_INBOX_MAX_EVENTS", defaults.inbox_max_events),
            inbox_max_transactions=positive_int(env, "LOOKOUT_INBOX_MAX_TRANSACTIONS", defaults.inbox_max_transactions),
            inbox_max_logs=positive_int(env, "LOOKOUT_INBOX_MAX_LOGS", defaults.inbox_max_logs),
            inbox_max_raw_envelopes=positive_int(env, "LOOKOUT_INBOX_MAX_RAW_ENVELOPES", defaults.inbox_max_raw_envelopes),
            inbox_max_age_days=positive_int(env, "LOOKOUT_INBOX_MAX_AGE_DAYS", defaults.inbox_max_age_days),
            inbox_max_issues=positive_int(env, "LOOKOUT_INBOX_MAX_ISSUES", defaults.inbox_max_issues),
            inbox_max_bytes=positive_int(env, "LOOKOUT_INBOX_MAX_BYTES", defaults.inbox_max_bytes),
            sourcemap_builds=positive_int(env, "LOOKOUT_SOURCEMAP_BUILDS", defaults.sourcemap_builds),
            symbolicate_max_bytes=positive_int(env, "LOOKOUT_SYMBOLICATE_MAX_BYTES", defaults.symbolicate_max_bytes),
            symbolicate_max_cpu_ms=positive_int(env, "LOOKOUT_SYMBOLICATE_MAX_CPU_MS", defaults.symbolicate_max_cpu_ms),
            sentry_auth_token=env.get("SENTRY_AUTH_TOKEN", "").strip(),
            sentry_org=env.get("SENTRY_ORG", "").strip(),
            sentry_project=env.get("SENTRY_PROJECT", "").strip(),
            sentry_url=env.get("SENTRY_URL", "").strip(),
            upload_chunk_bytes=positive_int(env, "LOOKOUT_UPLOAD_CHUNK_BYTES", defaults.upload_chunk_bytes),
            upload_max_bundle_bytes=positive_int(
                env, "LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES", defaults.upload_max_bundle_bytes),
            upload_max_project_bytes=positive_int(
                env, "LOOKOUT_UPLOAD_MAX_PROJECT_BYTES", defaults.upload_max_project_bytes),
        )


SETTINGS = Settings.from_env()
