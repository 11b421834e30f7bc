"""Route paths, the navigation shown in the header, and the URL of an issue search."""

from urllib.parse import urlencode

HOME = "/"
TRY = "/try"
TRY_SLOW = "/try/slow"
ISSUES = "/issues"
ISSUE = "/issue"  # ?id=N
RELEASES = "/releases"  # release health per project and release (?project=N, ?release=<version>)
TRACES = "/traces"
TRACE = "/trace"  # ?id=<trace id>
LOGS = "/logs"
FEEDBACK = "/feedback"  # what users wrote (?project=N, ?before=<id>)
ALERTS = "/alerts"
MONITORS = "/monitors"  # cron monitors and their check-ins
TOKENS = "/tokens"
SETTINGS = "/settings"  # each project's inbound filters and scrubbing options (a picker chooses the project)
SIGN_IN = "/signin"
NOT_FOUND = "404"  # Reflex's slug for the not-found route

# (label, path) in header order; later pages add themselves here.
NAVIGATION: list[tuple[str, str]] = [
    ("Overview", HOME),
    ("Issues", ISSUES),
    ("Releases", RELEASES),
    ("Traces", TRACES),
    ("Logs", LOGS),
    ("Feedback", FEEDBACK),
    ("Alerts", ALERTS),
    ("Monitors", MONITORS),
    ("Tokens", TOKENS),
    ("Settings", SETTINGS),
    ("Try it", TRY),
]


def issues_search(query: str, sort: str = "date", project: str = "") -> str:
    """The URL of an issue search (/issues): what the page shows for it, and what a link to it is."""
    wanted = {"query": query, **({"sort": sort} if sort != "date" else {}), **({"project": project} if project else {})}
    return f"{ISSUES}?{urlencode(wanted)}"
