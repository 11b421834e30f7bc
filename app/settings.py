"""Lookout's settings, read from the environment once: the monitoring's (`MonitoringSettings`,
the plugin's: DSN, tunnel, limits, SDK values) and Lookout's own (inbox, alerts, uploads, symbolication).

This module is the single source of truth for Lookout's own fields; the monitoring's are read by
reflex_lookout/settings.py, with the same variable names. One value comes from the database instead:
the embedded inbox's own DSN key, random per install, unless LOOKOUT_LOCAL_DSN names one
(`Settings.local_dsn`, filled in by app/projects/registry.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from reflex_lookout.dsn import Dsn
from reflex_lookout.settings import MIB, MonitoringSettings
from reflex_lookout.settings_error import SettingsError
from reflex_lookout.settings_reader import Reader

# The embedded inbox's project when LOOKOUT_LOCAL_DSN is not set: its DSN is
# http://<random key>@localhost/1 (`local_dsn_with`); the browser sends through the tunnel, so the
# host is an identity, never contacted.
LOCAL_PROJECT_ID = 1


class LocalDsnUnknown(RuntimeError):
    """The local DSN was needed before it was read from the database."""


def local_dsn_with(public_key: str) -> Dsn:
    """The embedded inbox's DSN when LOOKOUT_LOCAL_DSN is not set, with this install's key."""
    return Dsn("http", public_key, "localhost", None, "", str(LOCAL_PROJECT_ID))


def public_url(env: Mapping[str, str], name: str) -> str:
    """The URL users open (LOOKOUT_PUBLIC_URL), without a trailing slash; "" for none."""
    text = env.get(name, "").strip().rstrip("/")
    if not text:
        return ""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise SettingsError(f"{name} {text!r} must be the URL users open, like https://lookout.example.com.")
    return text


@dataclass(frozen=True)
class Settings(MonitoringSettings):
    """Lookout's settings: the monitoring's, and its own. Fields without an environment variable are
    fixed by the spec."""

    # The DSN that names the embedded inbox: LOOKOUT_LOCAL_DSN, or (None here) this install's own,
    # read from the database at start and at compile time (`settle_local_dsn`).
    local_dsn: Dsn | None = None
    # Inbox retention (local mode), per project; every issue keeps its first and latest event.
    inbox_max_events: int = 10_000
    inbox_max_transactions: int = 10_000
    inbox_max_logs: int = 50_000
    inbox_max_sessions: int = 100_000  # rows of inbox_session per project (app/releases/session_retention.py)
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
    # The address users reach Lookout at, e.g. https://lookout.example.com (LOOKOUT_PUBLIC_URL; "" for
    # none): its host counts as this machine's name and its origin as the app's own (app/console/access.py).
    public_url: str = ""
    # Security reports (CSP, Expect-CT, HPKP) per minute per project key, a budget of their own beside
    # the errors' (app/ingest/security_reports.py): a page that violates its policy on every view
    # must not crowd out the project's errors. 0: no limit.
    security_reports_per_min_per_key: int = 600
    # The tunnel's stats are the console's (the home page shows them): always on, and in the Reflex app
    # answered by the inbox API under the console's rule (app/inbox/json_api.py: this machine or signed in).
    # LOOKOUT_TUNNEL_STATS is the plugin's switch, for host apps, where they are off by default.
    tunnel_stats: bool = True

    @property
    def can_mail(self) -> bool:
        """Whether this server can send e-mail: it has an SMTP server and a From address."""
        return bool(self.smtp_url and self.alert_from)

    @property
    def reporting_dsn(self) -> Dsn:
        """The DSN every SDK of this app reports with: Sentry's, or the embedded inbox's (the
        destination seam: the plugin's tunnel and server SDK read this)."""
        if self.dsn is not None:
            return self.dsn
        if self.local_dsn is None:
            raise LocalDsnUnknown("The local DSN's key is read from the database at start (app/projects/registry.py); "
                                  "nothing may report before.")
        return self.local_dsn

    def settle_local_dsn(self, dsn: Dsn) -> None:
        """Fill in this install's own local DSN, once per process, before anything reports: the one
        field read from the database, so it is written in place, where everything built from these
        settings sees it."""
        object.__setattr__(self, "local_dsn", dsn)

    @property
    def destination(self) -> str:
        """Where reports go, in words: the DSN's host, or the embedded inbox."""
        return self.dsn.netloc if self.dsn else "local inbox"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Settings:
        read = Reader({}, env)
        number = read.positive
        defaults = cls()
        return cls(
            **{**MonitoringSettings.fields_from({}, env), "tunnel_stats": True},
            local_dsn=Dsn.parse(local) if (local := env.get("LOOKOUT_LOCAL_DSN", "").strip()) else None,
            public_url=public_url(env, "LOOKOUT_PUBLIC_URL"),
            smtp_url=env.get("LOOKOUT_SMTP_URL", "").strip(),
            alert_from=env.get("LOOKOUT_ALERT_FROM", "").strip(),
            alert_emails=tuple(read.words("LOOKOUT_ALERT_EMAILS")),
            alert_webhooks=tuple(w.strip() for w in env.get("LOOKOUT_ALERT_WEBHOOKS", "").split(",") if w.strip()),
            webhook_allow=tuple(read.words("LOOKOUT_WEBHOOK_ALLOW")),
            security_reports_per_min_per_key=read.whole(
                "LOOKOUT_SECURITY_REPORTS_PER_MIN_PER_KEY", defaults.security_reports_per_min_per_key),
            inbox_max_events=number("", "LOOKOUT_INBOX_MAX_EVENTS", defaults.inbox_max_events),
            inbox_max_transactions=number("", "LOOKOUT_INBOX_MAX_TRANSACTIONS", defaults.inbox_max_transactions),
            inbox_max_logs=number("", "LOOKOUT_INBOX_MAX_LOGS", defaults.inbox_max_logs),
            inbox_max_sessions=number("", "LOOKOUT_INBOX_MAX_SESSIONS", defaults.inbox_max_sessions),
            inbox_max_raw_envelopes=number("", "LOOKOUT_INBOX_MAX_RAW_ENVELOPES", defaults.inbox_max_raw_envelopes),
            inbox_max_age_days=number("", "LOOKOUT_INBOX_MAX_AGE_DAYS", defaults.inbox_max_age_days),
            inbox_max_issues=number("", "LOOKOUT_INBOX_MAX_ISSUES", defaults.inbox_max_issues),
            inbox_max_bytes=number("", "LOOKOUT_INBOX_MAX_BYTES", defaults.inbox_max_bytes),
            sourcemap_builds=number("", "LOOKOUT_SOURCEMAP_BUILDS", defaults.sourcemap_builds),
            symbolicate_max_bytes=number("", "LOOKOUT_SYMBOLICATE_MAX_BYTES", defaults.symbolicate_max_bytes),
            symbolicate_max_cpu_ms=number("", "LOOKOUT_SYMBOLICATE_MAX_CPU_MS", defaults.symbolicate_max_cpu_ms),
            sentry_auth_token=env.get("SENTRY_AUTH_TOKEN", "").strip(),
            sentry_org=env.get("SENTRY_ORG", "").strip(),
            sentry_project=env.get("SENTRY_PROJECT", "").strip(),
            sentry_url=env.get("SENTRY_URL", "").strip(),
            upload_chunk_bytes=number("", "LOOKOUT_UPLOAD_CHUNK_BYTES", defaults.upload_chunk_bytes),
            upload_max_bundle_bytes=number("", "LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES", defaults.upload_max_bundle_bytes),
            upload_max_project_bytes=number("", "LOOKOUT_UPLOAD_MAX_PROJECT_BYTES", defaults.upload_max_project_bytes),
        )


SETTINGS = Settings.from_env()
