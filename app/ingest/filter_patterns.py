"""What Sentry's built-in inbound filters match, as Relay's `relay-filter` crate and Sentry's
`inbound_filters` define them (read there; written here as data): the error values and script sources
of browser extensions, the user agents of web crawlers, the oldest versions of legacy browsers, the
names of health-check transactions, and the React hydration and ChunkLoadError messages. The
patterns are this module's own constants, never a user's, so plain `re` alternations of literals."""

from __future__ import annotations

import re

from app.ingest.globs import Glob


def _any_of(*literals: str) -> str:
    return "|".join(re.escape(literal) for literal in literals)


# browser_extensions.rs: the first exception's value ...
EXTENSION_VALUES = re.compile(_any_of(
    "top.GLOBALS", "originalCreateNotification", "canvas.contentDocument", "MyApp_RemoveAllHighlights",
    "http://tt.epicplay.com", "Can't find variable: ZiteReader", "jigsaw is not defined",
    "ComboSearch is not defined", "http://loading.retry.widdit.com/", "atomicFindClose", "fb_xd_fragment",
    "bmi_SafeAddOnload", "EBCallBackMessageReceived", "_gCrWeb", "conduitPage",
    "null is not an object (evaluating 'elt.parentNode')", "plugin.setSuspendState is not a function",
    "Extension context invalidated", "webkit-masked-url:", "can't access dead object",
), re.IGNORECASE)
# ... and the script of its last frame that names one (not "<anonymous>" nor "[native code]").
EXTENSION_SOURCES = re.compile(
    r"^(?:chrome(?:-extension)?|moz-extension|safari(?:-web)?-extension)://|" + _any_of(
        "graph.facebook.com", "connect.facebook.net", "eatdifferent.com.woopra-ns.com", "static.woopra.com/js/woopra.js",
        "webkit-masked-url", "127.0.0.1:4001/isrunning", "webappstoolbarba.texthelp.com/",
        "metrics.itunes.apple.com.edgesuite.net/", "kaspersky-labs.com",
    ), re.IGNORECASE)
ANONYMOUS_FRAMES = ("<anonymous>", "[native code]")

# web_crawlers.rs: user agents (any case).
WEB_CRAWLERS = re.compile(_any_of(
    "Mediapartners-Google", "AdsBot-Google", "Googlebot", "FeedFetcher-Google", "BingBot", "BingPreview",
    "Baiduspider", "Slurp", "Sogou", "facebook", "ia_archiver", "Slack", "Calypso AppCrawler", "pingdom",
    "lyticsbot", "AWS Security Scanner", "HubSpot Crawler",
) + r"|bots?[/\s);]|spider[/\s);]", re.IGNORECASE)

# Sentry's legacy-browser subfilters ("ie", "edge", ...): each browser family (as ua-parser names
# it; "IE Mobile" counts as "IE") up to and including its newest legacy major version.
LEGACY_BROWSERS: dict[str, int] = {
    "IE": 11, "Edge": 110, "Safari": 15, "Firefox": 110, "Chrome": 110, "Opera": 99, "Android": 3, "Opera Mini": 34,
}
FAMILY_ALIASES = {"IE Mobile": "IE"}

# Sentry's health-check transaction names (sentry/constants.py HEALTH_CHECK_GLOBS).
HEALTH_CHECKS = tuple(Glob(pattern) for pattern in (
    "*healthcheck*", "*heartbeat*", "*/health", "*/healthy", "*/healthz", "*/live", "*/livez", "*/ready",
    "*/readyz", "*/ping",
))

# Sentry's generic filters: React's hydration errors (by their decoder URLs) ...
_HYDRATION_CODES = ("418", "419", "421", "422", "423", "425")
REACT_HYDRATION = tuple(Glob(pattern) for code in _HYDRATION_CODES for pattern in (
    f"*https://reactjs.org/docs/error-decoder.html?invariant={code}*", f"*https://react.dev/errors/{code}*"))
# ... and webpack's and Turbopack's chunk load errors: (type glob, value glob) of any exception.
CHUNK_LOAD = tuple((Glob(kind), Glob(value)) for kind, value in (
    ("ChunkLoadError", "Loading chunk *"),
    ("*Uncaught *", "ChunkLoadError: Loading chunk *"),
    ("ChunkLoadError", "Failed to load chunk *"),
    ("*Uncaught *", "ChunkLoadError: Failed to load chunk *"),
    ("Error", "Uncaught (in promise): ChunkLoadError*"),
))

LOCAL_ADDRESSES = ("127.0.0.1", "::1")  # localhost.rs: user.ip_address ...
LOCAL_HOSTS = ("127.0.0.1", "localhost")  # ... or the host of request.url
