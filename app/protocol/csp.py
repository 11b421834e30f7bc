"""A CSP violation report as Sentry reads it: its effective directive, title, culprit and tags,
following Relay's rules (`relay-event-schema`, `protocol/security_report.rs`), so that an issue made
here reads and groups as it would in Sentry.

A report comes in three spellings of the same fields: CSP level 2's kebab-case
(`{"csp-report": {"blocked-uri": ...}}`), the Reporting API's camelCase body (`blockedURL`) and
snake_case. `CspReport.read` takes any of them. The effective directive is the report's
`effective-directive`, else the first word of its `violated-directive` (Firefox sends only that);
a report naming neither as a directive Relay knows is refused (`InvalidReport`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from app.protocol.fields import cut, whole

FIELD_LENGTH = 8192  # every string of a report is cut at this (Relay's MaxChars::Message)

DIRECTIVES = frozenset({
    "base-uri", "child-src", "connect-src", "default-src", "fenced-frame-src", "font-src", "form-action",
    "frame-ancestors", "frame-src", "img-src", "manifest-src", "media-src", "object-src", "plugin-types",
    "prefetch-src", "referrer", "script-src", "script-src-attr", "script-src-elem", "style-src",
    "style-src-elem", "style-src-attr", "upgrade-insecure-requests", "worker-src", "sandbox", "navigate-to",
    "report-uri", "report-to", "block-all-mixed-content", "require-sri-for", "require-trusted-types-for",
    "trusted-types",
})
# Each field's spellings: Relay's name (snake_case), CSP2's (kebab-case) and the Reporting API's.
_SPELLINGS = {
    "effective_directive": ("effective-directive", "effectiveDirective"),
    "blocked_uri": ("blocked-uri", "blockedURL"),
    "document_uri": ("document-uri", "documentURL"),
    "original_policy": ("original-policy", "originalPolicy"),
    "referrer": (),
    "status_code": ("status-code", "statusCode"),
    "violated_directive": ("violated-directive", "violatedDirective"),
    "source_file": ("source-file", "sourceFile"),
    "line_number": ("line-number", "lineNumber"),
    "column_number": ("column-number", "columnNumber"),
    "script_sample": ("script-sample", "scriptSample", "sample"),
    "disposition": (),
}
_NUMBERS = ("status_code", "line_number", "column_number")
# Blocked local resources: what each directive's title says (Relay's wording, kept as it is).
_INLINE = {
    "child-src": "Blocked inline 'child'", "connect-src": "Blocked inline 'connect'",
    "font-src": "Blocked inline 'font'", "img-src": "Blocked inline 'image'",
    "manifest-src": "Blocked inline 'manifest'", "media-src": "Blocked inline 'media'",
    "object-src": "Blocked inline 'object'", "script-src-attr": "Blocked unsafe 'script' element",
    "script-src-elem": "Blocked inline script attribute", "style-src": "Blocked inline 'style'",
    "style-src-elem": "Blocked 'style' or 'link' element", "style-src-attr": "Blocked style attribute",
    "script-src": "Blocked unsafe (eval() or inline) 'script'",
}
# Blocked resources from somewhere: "{0}" is the blocked URI, normalised.
_FROM = {
    "child-src": "Blocked 'child' from '{0}'", "connect-src": "Blocked 'connect' from '{0}'",
    "font-src": "Blocked 'font' from '{0}'", "form-action": "Blocked 'form' action to '{0}'",
    "img-src": "Blocked 'image' from '{0}'", "manifest-src": "Blocked 'manifest' from '{0}'",
    "media-src": "Blocked 'media' from '{0}'", "object-src": "Blocked 'object' from '{0}'",
    "script-src": "Blocked 'script' from '{0}'", "script-src-attr": "Blocked inline script attribute from '{0}'",
    "script-src-elem": "Blocked 'script' from '{0}'", "style-src": "Blocked 'style' from '{0}'",
    "style-src-elem": "Blocked 'style' from '{0}'", "style-src-attr": "Blocked style attribute from '{0}'",
}
# Schemes written with "//" (Python's urlunsplit, which Sentry's normaliser was first written with).
_HOST_SCHEMES = frozenset({
    "ftp", "http", "gopher", "nntp", "telnet", "imap", "wais", "file", "mms", "https", "shttp", "snews",
    "prospero", "rtsp", "rtspu", "rsync", "svn", "svn+ssh", "sftp", "nfs", "git", "git+ssh", "ws", "wss",
})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_KEYWORDS = ("'none'", "'self'", "'unsafe-inline'", "'unsafe-eval'")
_SCHEMED = ("data:", "mediastream:", "blob:", "filesystem:", "http:", "https:", "file:")


class InvalidReport(ValueError):
    """A CSP report that names no directive Sentry knows."""


@dataclass(frozen=True)
class CspReport:
    """One CSP violation, its fields in Relay's names (numbers kept only when they are numbers)."""
    fields: dict[str, Any]
    directive: str  # the effective directive

    @classmethod
    def read(cls, raw: dict[str, Any]) -> CspReport:
        fields: dict[str, Any] = {}
        for name, spellings in _SPELLINGS.items():
            value = next((raw[key] for key in (name, *spellings) if key in raw and raw[key] is not None), None)
            if name in _NUMBERS:
                value = _number(value)
            elif value is not None:
                value = cut(value, FIELD_LENGTH)
            if value is not None:
                fields[name] = value
        fields.setdefault("blocked_uri", "self")
        fields.setdefault("violated_directive", "")
        return cls(fields, _effective_directive(fields.get("effective_directive"), fields["violated_directive"]))

    @property
    def blocked_uri(self) -> str:
        return str(self.fields["blocked_uri"])

    def title(self) -> str:
        if self.directive == "script-src" and self.blocked_uri in ("inline", "eval"):
            return "Blocked unsafe inline 'script'" if self.blocked_uri == "inline" else "Blocked unsafe eval() 'script'"
        if _is_local(self.blocked_uri):
            return _INLINE.get(self.directive, f"Blocked inline '{self.directive}'")
        return _FROM.get(self.directive, f"Blocked '{self.directive}' from '{{0}}'").format(normalize_uri(self.blocked_uri))

    def culprit(self) -> str:
        """The violated directive, its sources normalised (the document's own origin as 'self')."""
        words = str(self.fields["violated_directive"]).split()
        if not words:
            return ""
        document = str(self.fields.get("document_uri", ""))
        origin = normalize_uri(document)
        return " ".join([words[0], *(self._normalize_source(word, origin, document) for word in words[1:])])

    def tags(self) -> list[list[str]]:
        tags = [["effective-directive", self.directive], ["blocked-uri", _sanitized(self.blocked_uri)]]
        parts = _split(self.blocked_uri)
        if parts is not None and parts.scheme in ("http", "https") and parts.hostname:
            tags.append(["blocked-host", parts.hostname])
        return tags

    def request(self) -> dict[str, Any]:
        request: dict[str, Any] = {"url": self.fields.get("document_uri")}
        if referrer := self.fields.get("referrer"):
            request["headers"] = [["Referer", referrer]]
        return request

    def interface(self) -> dict[str, Any]:
        """The event's `csp` interface: the report's fields, the effective directive settled."""
        return {**self.fields, "effective_directive": self.directive}

    def grouping(self) -> list[str]:
        """What the issue is: the directive and where the blocked resource came from."""
        return ["csp", self.directive, normalize_uri(self.blocked_uri)]

    @staticmethod
    def _normalize_source(value: str, origin: str, document: str) -> str:
        if value in _KEYWORDS:
            return value
        if value.startswith(_SCHEMED):
            return "'self'" if origin == normalize_uri(value) else value
        if value == origin:
            return "'self'"
        scheme = document.partition(":")[0] if ":" in document else None
        return value if scheme in (None, "http", "https") else _unsplit(scheme or "", value)


def normalize_uri(value: str) -> str:
    """Where a URI points, as Sentry names it: the host (and port) of http(s) URIs, `scheme://host`
    or `scheme:` for others, `'self'` for the document itself."""
    if _is_local(value):
        return "'self'"
    if ":" not in value:
        return _unsplit(value, "")
    parts = _split(value)
    if parts is None:
        return value
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        return value
    named = host if parts.scheme in ("http", "https") else _unsplit(parts.scheme, host)
    return f"{named}:{port}" if port is not None and port != _DEFAULT_PORTS.get(parts.scheme) else named


def _effective_directive(effective: str | None, violated: str) -> str:
    for candidate in (effective, violated):
        word = (candidate or "").split(" ", 1)[0]
        if word in DIRECTIVES:
            return word
    raise InvalidReport(f"The CSP report names no directive Lookout knows (effective-directive {effective!r}, "
                        f"violated-directive {violated[:100]!r}).")


def _number(value: Any) -> int | None:
    if whole(value) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 20:
        return int(value)
    return None


def _is_local(uri: str) -> bool:
    return uri in ("", "self", "'self'")


def _unsplit(scheme: str, host: str) -> str:
    if host or scheme in _HOST_SCHEMES:
        return f"{scheme}://{host}"
    return f"{scheme}:{host}" if scheme else ""


def _split(uri: str) -> Any:
    try:
        return urlsplit(uri)
    except ValueError:
        return None


def _sanitized(uri: str) -> str:
    """Stripe's API URLs carry secrets in their query: cut there (as Relay does)."""
    if uri.startswith("https://api.stripe.com/"):
        return uri.split("?", 1)[0].split("#", 1)[0]
    return uri
